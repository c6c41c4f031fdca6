/**
 * A strict JSON parser that keeps integers beyond 2^53 exact as BigInt.
 *
 * It exists for the rare documents whose integer literals JSON.parse would
 * round (nanosecond timestamps, 64-bit ids); the json codec takes it only
 * when a cheap scan finds a run of 16 or more digits. It accepts exactly the
 * grammar of RFC 8259 (as JSON.parse does) and gives the same values, except
 * that an integer literal (no fraction, no exponent) beyond ±2^53 becomes a
 * BigInt.
 */
import { integerValue, setOwn } from '../integers';

export function parsePrecise(text: string): unknown {
  const parser = new PreciseParser(text);
  parser.skipWhitespace();
  const value = parser.parseValue();
  parser.skipWhitespace();
  if (parser.pos !== text.length) parser.fail('unexpected trailing characters');
  return value;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** Longest integer literal (digits, sign excluded) that is always a safe integer: 15 digits < 2^53. */
const ALWAYS_SAFE_DIGITS = 15;

class PreciseParser {
  pos = 0;

  constructor(private readonly text: string) {}

  fail(what: string): never {
    const at = this.pos;
    const near = this.text.slice(at, at + 20);
    throw new SyntaxError(`json: ${what} at character ${at}${near ? ` near ${JSON.stringify(near)}` : ''}`);
  }

  skipWhitespace(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) pos++;
      else break;
    }
    this.pos = pos;
  }

  parseValue(): unknown {
    const c = this.text.charCodeAt(this.pos);
    if (c === QUOTE) return this.parseString();
    if (c === 0x7b) return this.parseObject();
    if (c === 0x5b) return this.parseArray();
    if (c === MINUS || (c >= ZERO && c <= NINE)) return this.parseNumber();
    if (this.text.startsWith('true', this.pos)) return this.literal(4, true);
    if (this.text.startsWith('false', this.pos)) return this.literal(5, false);
    if (this.text.startsWith('null', this.pos)) return this.literal(4, null);
    return this.fail(Number.isNaN(c) ? 'unexpected end of input' : 'unexpected character');
  }

  private literal<T>(length: number, value: T): T {
    this.pos += length;
    return value;
  }

  private parseObject(): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    this.pos++; // {
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return object;
    }
    for (;;) {
      if (this.text.charCodeAt(this.pos) !== QUOTE) this.fail('expected a string key');
      const key = this.parseString();
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== 0x3a) this.fail("expected ':'");
      this.pos++;
      this.skipWhitespace();
      const value = this.parseValue();
      // a plain assignment to "__proto__" would set the prototype; JSON.parse makes an own property
      setOwn(object, key, value);
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos++);
      if (c === 0x7d) return object;
      if (c !== 0x2c) {
        this.pos--;
        this.fail("expected ',' or '}'");
      }
      this.skipWhitespace();
    }
  }

  private parseArray(): unknown[] {
    const array: unknown[] = [];
    this.pos++; // [
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return array;
    }
    for (;;) {
      array.push(this.parseValue());
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos++);
      if (c === 0x5d) return array;
      if (c !== 0x2c) {
        this.pos--;
        this.fail("expected ',' or ']'");
      }
      this.skipWhitespace();
    }
  }

  private parseString(): string {
    const text = this.text;
    this.pos++; // opening quote
    let result = '';
    let runStart = this.pos;
    for (;;) {
      const c = text.charCodeAt(this.pos);
      if (c === QUOTE) {
        result += text.slice(runStart, this.pos);
        this.pos++;
        return result;
      }
      if (c === BACKSLASH) {
        result += text.slice(runStart, this.pos);
        result += this.parseEscape();
        runStart = this.pos;
        continue;
      }
      // !(c >= 0x20) also catches NaN, the end of the text
      if (!(c >= 0x20)) this.fail(Number.isNaN(c) ? 'unterminated string' : 'control character in string');
      this.pos++;
    }
  }

  private parseEscape(): string {
    const c = this.text.charCodeAt(this.pos + 1);
    this.pos += 2;
    switch (c) {
      case QUOTE:
        return '"';
      case BACKSLASH:
        return '\\';
      case 0x2f:
        return '/';
      case 0x62:
        return '\b';
      case 0x66:
        return '\f';
      case 0x6e:
        return '\n';
      case 0x72:
        return '\r';
      case 0x74:
        return '\t';
      case 0x75: {
        const hex = this.text.slice(this.pos, this.pos + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('bad \\u escape');
        this.pos += 4;
        // lone surrogates are kept, as JSON.parse keeps them
        return String.fromCharCode(parseInt(hex, 16));
      }
      default:
        this.pos -= 2;
        return this.fail('bad escape');
    }
  }

  private parseNumber(): number | bigint {
    const text = this.text;
    const start = this.pos;
    if (text.charCodeAt(this.pos) === MINUS) this.pos++;
    const digitsStart = this.pos;
    const first = text.charCodeAt(this.pos);
    if (first === ZERO) this.pos++;
    else if (first > ZERO && first <= NINE) this.skipDigits();
    else this.fail('expected a digit');
    const integerDigits = this.pos - digitsStart;
    let isInteger = true;
    if (text.charCodeAt(this.pos) === 0x2e) {
      this.pos++;
      if (!this.skipDigits()) this.fail('expected a digit after the decimal point');
      isInteger = false;
    }
    const e = text.charCodeAt(this.pos);
    if (e === 0x65 || e === 0x45) {
      this.pos++;
      const sign = text.charCodeAt(this.pos);
      if (sign === 0x2b || sign === MINUS) this.pos++;
      if (!this.skipDigits()) this.fail('expected a digit in the exponent');
      isInteger = false;
    }
    const literal = text.slice(start, this.pos);
    if (!isInteger || integerDigits <= ALWAYS_SAFE_DIGITS) return Number(literal);
    return integerValue(BigInt(literal));
  }

  /** Skips a run of digits; tells whether there was at least one. */
  private skipDigits(): boolean {
    const text = this.text;
    const start = this.pos;
    let c = text.charCodeAt(this.pos);
    while (c >= ZERO && c <= NINE) c = text.charCodeAt(++this.pos);
    return this.pos > start;
  }
}
