/**
 * CSV as RFC 4180 writes it: fields separated by commas, records by CRLF or
 * LF, a field in double quotes may hold commas, line breaks and `""` for a
 * quote. The first record names the columns. Every value is a string (CSV
 * has no types); an empty line is skipped.
 */
export function parseCsv(text: string, file: string): Record<string, string>[] {
  const records = csvRecords(text, file);
  if (records.length === 0) return [];
  const header = records[0].fields;
  const rows = records.slice(1);
  const seen = new Set<string>();
  for (const name of header) {
    if (name === '') throw new Error(`${file}: line 1: an empty column name`);
    if (seen.has(name)) throw new Error(`${file}: line 1: column '${name}' appears twice`);
    seen.add(name);
  }
  return rows.map(({ fields, line }) => {
    if (fields.length !== header.length) throw new Error(`${file}: line ${line}: ${fields.length} fields, the header has ${header.length}`);
    const row: Record<string, string> = {};
    header.forEach((name, i) => (row[name] = fields[i]));
    return row;
  });
}

interface CsvRecord {
  fields: string[];
  /** the line it starts on, for messages */
  line: number;
}

function csvRecords(text: string, file: string): CsvRecord[] {
  const out: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let startLine = 1;
  let i = 0;
  const endRecord = () => {
    fields.push(field);
    if (!(fields.length === 1 && fields[0] === '')) out.push({ fields, line: startLine });
    fields = [];
    field = '';
  };
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else {
        if (c === '\n') line++;
        field += c;
      }
      i++;
      continue;
    }
    if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      endRecord();
      if (c === '\r') i++;
      line++;
      startLine = line;
    } else field += c;
    i++;
  }
  if (quoted) throw new Error(`${file}: line ${startLine}: a quoted field is not closed`);
  if (field !== '' || fields.length > 0) endRecord();
  return out;
}
