/**
 * CSV as RFC 4180 writes it: fields separated by a delimiter (a comma unless
 * told otherwise: `;` and tab are common), records by CRLF or LF, a field in
 * double quotes may hold delimiters, line breaks and `""` for a quote. A
 * UTF-8 byte-order mark before the first column name (Excel writes one) is
 * not part of the name. The first record names the columns. Every value is a
 * string (CSV has no types); an empty line is skipped.
 *
 * Hand-written rather than a CSV package: none is installed here, this is
 * the whole grammar, and it reads a file in chunks (a table loads without
 * holding its whole text, between other work; see tables.ts). A property
 * test checks it against a naive reading and against itself cut anywhere.
 */

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
const BOM = 0xfeff;

/** Where the reader is within a field. */
const enum At {
  /** the start of a field: a quote here opens a quoted field */
  Start,
  /** inside a field that is not quoted */
  Plain,
  /** inside a quoted field */
  Quoted,
  /** just after a quote inside a quoted field: a second quote is a literal one, anything else closed the field */
  QuoteInQuoted,
}

/** Whether `delimiter` can separate CSV fields: one character, not a quote or a line break. */
export function delimiterProblem(delimiter: string): string | undefined {
  if (delimiter.length !== 1) return `must be one character, not ${JSON.stringify(delimiter)}`;
  if (delimiter === '"' || delimiter === '\n' || delimiter === '\r') return `cannot be ${JSON.stringify(delimiter)} (it has a meaning of its own in CSV)`;
  return undefined;
}

/**
 * Splits CSV text, given in pieces of any size, into records. Each complete
 * record goes to `onRecord` with the line it starts on (for messages); the
 * state between pieces is kept, so a piece may end anywhere, even inside a
 * quoted field or between the CR and LF of a line break.
 */
export class CsvRecordReader {
  private readonly delimiter: number;
  private fields: string[] = [];
  /** the current field's text from earlier pieces or quoted parts */
  private field = '';
  private at = At.Start;
  /** the last piece ended on a CR outside quotes: a line break if the next piece starts with LF, else a character of the field */
  private pendingCr = false;
  private started = false;
  /** the record has a quoted field: `""` alone on a line is a record of one empty field, not an empty line */
  private quotedInRecord = false;
  private line = 1;
  private startLine = 1;

  constructor(
    private readonly file: string,
    delimiter: string,
    private readonly onRecord: (fields: string[], line: number) => void,
  ) {
    const problem = delimiterProblem(delimiter);
    if (problem) throw new Error(`delimiter ${problem}`);
    this.delimiter = delimiter.charCodeAt(0);
  }

  push(text: string): void {
    const n = text.length;
    if (n === 0) return;
    let i = 0;
    if (!this.started) {
      this.started = true;
      if (text.charCodeAt(0) === BOM) i = 1;
    }
    if (this.pendingCr) {
      this.pendingCr = false;
      if (text.charCodeAt(i) === LF) {
        this.endRecord();
        i++;
      } else {
        this.field += '\r';
        this.at = At.Plain;
      }
    }
    // `mark` is where the current field's text in this piece begins: fields are cut out with slice, not built a character at a time
    let mark = i;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (this.at === At.Quoted) {
        if (c === QUOTE) {
          this.field += text.slice(mark, i);
          this.at = At.QuoteInQuoted;
          mark = i + 1;
        } else if (c === LF) this.line++;
        i++;
        continue;
      }
      if (this.at === At.QuoteInQuoted) {
        if (c === QUOTE) {
          this.field += '"';
          this.at = At.Quoted;
          i++;
          mark = i;
          continue;
        }
        // the field's closing quote; what follows up to the delimiter is kept, as most readers do
        this.at = At.Plain;
      }
      if (c === QUOTE && this.at === At.Start) {
        this.at = At.Quoted;
        this.quotedInRecord = true;
        i++;
        mark = i;
      } else if (c === this.delimiter) {
        this.fields.push(this.field + text.slice(mark, i));
        this.field = '';
        this.at = At.Start;
        i++;
        mark = i;
      } else if (c === LF || (c === CR && (i + 1 === n || text.charCodeAt(i + 1) === LF))) {
        if (c === CR && i + 1 === n) {
          // CRLF cut between two pieces, or a CR inside a field: the next piece tells
          this.field += text.slice(mark, i);
          this.pendingCr = true;
          i++;
          mark = i;
          continue;
        }
        this.field += text.slice(mark, i);
        this.endRecord();
        i += c === CR ? 2 : 1;
        mark = i;
      } else {
        this.at = At.Plain;
        i++;
      }
    }
    if (mark < n) this.field += text.slice(mark, n);
  }

  /** The text has ended: the last record (without a line break) goes out; a quoted field still open is an error. */
  end(): void {
    if (this.at === At.Quoted) throw new Error(`${this.file}: line ${this.startLine}: a quoted field is not closed`);
    if (this.pendingCr) {
      this.pendingCr = false;
      this.field += '\r';
    }
    if (this.field !== '' || this.fields.length > 0 || this.quotedInRecord) this.endRecord();
  }

  private endRecord(): void {
    const fields = this.fields;
    fields.push(this.field);
    this.fields = [];
    this.field = '';
    this.at = At.Start;
    const empty = fields.length === 1 && fields[0] === '' && !this.quotedInRecord;
    this.quotedInRecord = false;
    if (!empty) this.onRecord(fields, this.startLine);
    this.line++;
    this.startLine = this.line;
  }
}

/** Records into rows: the first names the columns (each once, none empty), every other must have as many fields. */
export class CsvRowReader {
  private header: string[] | undefined;
  private readonly records: CsvRecordReader;

  constructor(
    private readonly file: string,
    delimiter: string,
    private readonly onRow: (row: Record<string, string>, line: number) => void,
  ) {
    this.records = new CsvRecordReader(file, delimiter, (fields, line) => this.record(fields, line));
  }

  push(text: string): void {
    this.records.push(text);
  }

  end(): void {
    this.records.end();
  }

  private record(fields: string[], line: number): void {
    const header = this.header;
    if (header === undefined) {
      const seen = new Set<string>();
      for (const name of fields) {
        if (name === '') throw new Error(`${this.file}: line ${line}: an empty column name`);
        if (seen.has(name)) throw new Error(`${this.file}: line ${line}: column '${name}' appears twice`);
        seen.add(name);
      }
      this.header = fields;
      return;
    }
    if (fields.length !== header.length) throw new Error(`${this.file}: line ${line}: ${fields.length} fields, the header has ${header.length}`);
    const row: Record<string, string> = {};
    for (let i = 0; i < header.length; i++) row[header[i]] = fields[i];
    this.onRow(row, line);
  }
}

/** The rows of a whole CSV text (see CsvRowReader). */
export function parseCsv(text: string, file: string, delimiter = ','): Record<string, string>[] {
  const rows: Record<string, string>[] = [];
  const reader = new CsvRowReader(file, delimiter, (row) => rows.push(row));
  reader.push(text);
  reader.end();
  return rows;
}
