import { FACILITIES, SEVERITIES, type SyslogMessage } from './names';
import { parseRfc3164, parseRfc3339 } from './time';

/**
 * Parses one syslog message, RFC 5424 when a version number follows the
 * priority, RFC 3164 (BSD) otherwise. Like the original, it is lenient with
 * 3164, whose senders disagree: the priority, hostname and tag may each be
 * missing, and an RFC 3339 timestamp is accepted in place of `Mmm dd hh:mm:ss`.
 */
export function parseSyslog(text: string, ingestNs: bigint): SyslogMessage {
  const line = text.replace(/[\r\n\0]+$/, '');
  const head = /^<(\d{1,3})>/.exec(line);
  let rest = line;
  let pri: { facility: string; severity: string } | undefined;
  if (head) {
    const code = Number(head[1]);
    if (code > 191) throw new Error(`syslog: priority ${code} out of range`);
    pri = { facility: FACILITIES[code >> 3], severity: SEVERITIES[code & 7] };
    rest = line.slice(head[0].length);
  }
  const version = /^([1-9]\d{0,2}) /.exec(rest);
  if (version && pri) return parse5424(rest.slice(version[0].length), pri, Number(version[1]));
  return parse3164(rest, pri, ingestNs);
}

const NIL = '-';
/** RFC 5424's PRINTUSASCII (%d33-126): what header fields and structured-data names are made of, and all the encoder writes */
const PRINTABLE = /^[\x21-\x7e]+$/;

function parse5424(text: string, pri: { facility: string; severity: string }, version: number): SyslogMessage {
  const reader = new Reader(text);
  const timestampText = reader.token();
  const hostname = reader.token();
  const appname = reader.token();
  const procid = reader.token();
  const msgid = reader.token();
  for (const [what, field] of [
    ['hostname', hostname],
    ['appname', appname],
    ['procid', procid],
    ['msgid', msgid],
  ]) {
    if (!PRINTABLE.test(field)) throw new Error(`syslog: RFC 5424 ${what} must be printable ASCII`);
  }
  const message: SyslogMessage = { protocol: 'RFC5424', msg: '', structured_data: null };
  if (hostname !== NIL) message.hostname = hostname;
  message.severity = pri.severity;
  message.facility = pri.facility;
  if (timestampText !== NIL) {
    const timestamp = parseRfc3339(timestampText);
    if (timestamp === undefined) throw new Error(`syslog: bad RFC 5424 timestamp ${JSON.stringify(timestampText)}`);
    message.timestamp = timestamp;
  }
  message.protocol_version = version;
  if (appname !== NIL) message.appname = appname;
  if (msgid !== NIL) message.msgid = msgid;
  message.structured_data = reader.structuredData();
  if (procid !== NIL) message.procid = procid;
  if (!reader.atEnd()) {
    reader.expect(' ');
    // a BOM only announces UTF-8; it is not part of the message
    message.msg = reader.rest().replace(/^\uFEFF/, '');
  }
  return orderKeys(message);
}

const BSD_TIMESTAMP = /^([A-Z][a-z]{2}) ([ \d]\d) (\d{2}:\d{2}:\d{2}) /;
// a tag and pid are printable ASCII (what the encoder can write back); anything else stays in the message
const TAG = /^((?:(?![[\]:])[\x21-\x7e])+)(?:\[((?:(?!\])[\x21-\x7e])*)\])?: ?/;

function parse3164(text: string, pri: { facility: string; severity: string } | undefined, ingestNs: bigint): SyslogMessage {
  let rest = text;
  const message: SyslogMessage = { protocol: 'RFC3164', msg: '', structured_data: null };
  if (pri) {
    message.severity = pri.severity;
    message.facility = pri.facility;
  }
  const bsd = BSD_TIMESTAMP.exec(rest);
  if (bsd) {
    const timestamp = parseRfc3164(bsd[1], Number(bsd[2].trim()), bsd[3], ingestNs);
    if (timestamp === undefined) throw new Error(`syslog: bad timestamp ${JSON.stringify(bsd[0].trim())}`);
    message.timestamp = timestamp;
    rest = rest.slice(bsd[0].length);
  } else {
    const space = rest.indexOf(' ');
    const rfc3339 = space > 0 ? parseRfc3339(rest.slice(0, space)) : undefined;
    if (rfc3339 !== undefined) {
      message.timestamp = rfc3339;
      rest = rest.slice(space + 1);
    }
  }
  // the hostname is the next word unless that word is already the tag (`app[pid]:` or `app:`)
  const word = /^([\x21-\x7e]+) /.exec(rest);
  if (word && !TAG.test(rest) && message.timestamp !== undefined) {
    message.hostname = word[1];
    rest = rest.slice(word[0].length);
  }
  const tag = TAG.exec(rest);
  if (tag) {
    message.appname = tag[1];
    // an optional group: undefined when the tag has no [pid]
    const procid = tag[2] as string | undefined;
    if (procid !== undefined && procid !== '') message.procid = procid;
    rest = rest.slice(tag[0].length);
  }
  message.msg = rest;
  return orderKeys(message);
}

/** The original's key order, which eddy keeps so that encoded output matches it. */
const KEY_ORDER: (keyof SyslogMessage)[] = [
  'hostname',
  'severity',
  'facility',
  'timestamp',
  'protocol',
  'protocol_version',
  'appname',
  'msgid',
  'structured_data',
  'procid',
  'msg',
];

function orderKeys(message: SyslogMessage): SyslogMessage {
  const ordered: Record<string, unknown> = {};
  for (const key of KEY_ORDER) if (message[key] !== undefined) ordered[key] = message[key];
  return ordered as unknown as SyslogMessage;
}

class Reader {
  pos = 0;

  constructor(private readonly text: string) {}

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  rest(): string {
    return this.text.slice(this.pos);
  }

  expect(char: string): void {
    if (this.text[this.pos] !== char) throw new Error(`syslog: expected ${JSON.stringify(char)} at ${this.pos} of the header`);
    this.pos++;
  }

  /** One space-terminated header field of RFC 5424. */
  token(): string {
    const end = this.text.indexOf(' ', this.pos);
    if (end <= this.pos) throw new Error('syslog: RFC 5424 header is incomplete');
    const token = this.text.slice(this.pos, end);
    this.pos = end + 1;
    return token;
  }

  /** `-` or one or more `[id param="value" …]` elements. */
  structuredData(): Record<string, Record<string, string>[]> | null {
    if (this.text[this.pos] === '-') {
      this.pos++;
      return null;
    }
    if (this.text[this.pos] !== '[') throw new Error('syslog: expected structured data or -');
    const data: Record<string, Record<string, string>[]> = {};
    while (this.text[this.pos] === '[') {
      this.pos++;
      const id = this.name();
      const params: Record<string, string>[] = [];
      while (this.text[this.pos] === ' ') {
        this.pos++;
        const name = this.name();
        this.expect('=');
        this.expect('"');
        params.push({ [name]: this.paramValue() });
      }
      this.expect(']');
      data[id] = params;
    }
    return data;
  }

  private name(): string {
    const m = /^(?:(?![=\]"])[\x21-\x7e])+/.exec(this.text.slice(this.pos, this.pos + 64));
    if (!m) throw new Error(`syslog: bad structured-data name at ${this.pos}`);
    this.pos += m[0].length;
    return m[0];
  }

  private paramValue(): string {
    let value = '';
    for (;;) {
      // past the end of the text: undefined
      const c = this.text[this.pos++] as string | undefined;
      if (c === undefined) throw new Error('syslog: unterminated structured-data value');
      if (c === '"') return value;
      // RFC 5424 6.3.3: only \" \\ and \] are escapes; any other backslash is kept
      if (c === '\\' && ['"', '\\', ']'].includes(this.text[this.pos])) value += this.text[this.pos++];
      else value += c;
    }
  }
}
