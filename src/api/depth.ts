/**
 * Nesting depth of a request body, measured on the raw text before any parser
 * sees it. Parsers recurse per level: a JSON body a few thousand levels deep
 * overflows the stack further down (ajv, structuredClone), and the yaml
 * library slows down sharply with depth and, near a thousand compact levels,
 * can abort the whole process. Both scanners are linear, allocate nothing per
 * character and stop at the first place that goes past the limit.
 *
 * Depth counts collections: `{"a": 1}` is 1, `[[1]]` is 2, a scalar is 0.
 */

export interface TooDeep {
  line: number;
  column: number;
}

export function tooDeepMessage(where: TooDeep, max: number): string {
  return `body: nested deeper than ${max} levels at line ${where.line}, column ${where.column} (the API's limit, --api-max-depth)`;
}

/** Where a JSON text first nests deeper than `max`, or undefined. Exact (strings are skipped). */
export function jsonTooDeep(text: string, max: number): TooDeep | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_SQUARE || c === OPEN_CURLY) {
      if (++depth > max) return position(text, i);
    } else if (c === CLOSE_SQUARE || c === CLOSE_CURLY) depth--;
  }
  return undefined;
}

const BACKSLASH = 92;
const QUOTE = 34;
const OPEN_SQUARE = 91;
const CLOSE_SQUARE = 93;
const OPEN_CURLY = 123;
const CLOSE_CURLY = 125;

/** 1-based line and column of the character at `index` (only computed on failure). */
function position(text: string, index: number): TooDeep {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < index; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: index - lineStart + 1 };
}

interface Frame {
  indent: number;
  kind: 'seq' | 'map';
}

/**
 * Where a YAML text first nests deeper than `max`, or undefined.
 *
 * Block collections are followed by indentation: a stack of open sequences
 * and mappings with their columns, where a `- ` entry at the column of a
 * mapping key is a sequence inside that mapping (`key:\n- item`), and every
 * further `- ` or `key:` on the same line (`- - a: 1`) opens one more level.
 * Flow collections (`[`, `{`) add their bracket depth on top. Quoted scalars,
 * comments and block scalars (`|`, `>`) are skipped, so brackets inside text
 * do not count. The count is exact for ordinary documents; for odd ones it
 * may be off by a level or so, which is why the parsed value is measured
 * again exactly (see yaml-worker.ts): this scan only has to keep the parser
 * far from the depths where it breaks.
 */
export function yamlTooDeep(text: string, max: number): TooDeep | undefined {
  const frames: Frame[] = [];
  let flowDepth = 0; // > 0 while inside [ ] or { }, which may span lines
  let flowNodeStart = false; // in flow context: a node may start here
  let afterJsonLike = false; // in flow context: just after a quoted scalar or a closing bracket
  let quote = ''; // the open quote of a quoted scalar that spans lines
  let blockScalarParent: number | undefined; // lines indented deeper than this are block scalar text
  let lineNo = 0;
  const tooDeep = (at: number): TooDeep => ({ line: lineNo, column: at + 1 });
  /** A `- ` or a key at column `at` of the current line: a sibling, or one level deeper. */
  const open = (at: number, kind: Frame['kind']): boolean => {
    while (frames.length > 0 && frames[frames.length - 1].indent > at) frames.pop();
    const top = frames.at(-1);
    if (top?.indent === at) {
      if (top.kind === kind) return false;
      if (top.kind === 'seq') {
        // a key at the column of a `- ` entry ends that sequence (it was a mapping's value)
        frames.pop();
        const parent = frames.at(-1);
        if (parent?.indent === at && parent.kind === 'map') return false;
      }
    }
    frames.push({ indent: at, kind });
    return frames.length > max;
  };
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    let stop = end;
    if (stop > start && text.charCodeAt(stop - 1) === 13) stop--; // \r\n
    lineNo++;
    const line = text.slice(start, stop);
    start = end + 1;

    const documentMarker = isDocumentMarker(line);
    let col = 0;
    while (col < line.length && line[col] === ' ') col++;
    if (blockScalarParent !== undefined) {
      if (!documentMarker && (col === line.length || col > blockScalarParent)) continue;
      blockScalarParent = undefined;
    }

    let pos = 0;
    let atNodeStart = true;
    if (quote === '' && flowDepth === 0) {
      if (documentMarker) {
        frames.length = 0;
        pos = 3;
      } else if (line.startsWith('%', col) && col === 0)
        continue; // a directive
      else pos = col;
    }
    while (pos < line.length) {
      if (quote !== '') {
        pos = skipQuoted(line, pos, quote);
        if (pos < 0) break; // still open at the end of the line
        quote = '';
        atNodeStart = false;
        afterJsonLike = true;
        continue;
      }
      const c = line[pos];
      if (flowDepth > 0) {
        // flow context: brackets always count; a quote opens a scalar only where a node starts
        // (after [ { , : ? or a node property), since `it's` is a plain scalar
        if (c === ' ' || c === '\t') pos++;
        else if (c === '#' && (pos === 0 || line[pos - 1] === ' ' || line[pos - 1] === '\t')) break;
        else if (c === '[' || c === '{') {
          flowDepth++;
          if (frames.length + flowDepth > max) return tooDeep(pos);
          flowNodeStart = true;
          pos++;
        } else if (c === ']' || c === '}') {
          flowDepth--;
          flowNodeStart = false;
          afterJsonLike = true;
          pos++;
          atNodeStart = false;
        } else if (
          c === ',' ||
          (c === '?' && ' \t,[]{}'.includes(line[pos + 1] ?? ' ')) ||
          (c === ':' && (afterJsonLike || ' \t,[]{}'.includes(line[pos + 1] ?? ' ')))
        ) {
          // `?` and `:` are indicators when followed by a space or a flow indicator, `:` also right after a quoted or flow key ("a":1)
          flowNodeStart = true;
          afterJsonLike = false;
          pos++;
        } else if (flowNodeStart && (c === '"' || c === "'")) {
          quote = c;
          flowNodeStart = false;
          pos++;
        } else if (flowNodeStart && (c === '&' || c === '!')) {
          while (pos < line.length && !' \t,[]{}'.includes(line[pos])) pos++; // an anchor or a tag: a node still follows
        } else {
          // a plain scalar runs to a flow indicator, a `: ` or a ` #`
          flowNodeStart = false;
          afterJsonLike = false;
          while (
            pos < line.length &&
            !',[]{}'.includes(line[pos]) &&
            !(line[pos] === ':' && ' \t,[]{}'.includes(line[pos + 1] ?? ' ')) &&
            !(line[pos] === '#' && ' \t'.includes(line[pos - 1]))
          )
            pos++;
        }
        continue;
      }
      if (c === ' ' || c === '\t') {
        pos++;
        continue;
      }
      if (c === '#') break;
      const next = line.at(pos + 1);
      const separated = next === undefined || next === ' ' || next === '\t';
      if (atNodeStart && c === '-' && separated) {
        if (open(pos, 'seq')) return tooDeep(pos);
        pos++;
      } else if (atNodeStart && c === '?' && separated) {
        if (open(pos, 'map')) return tooDeep(pos);
        pos++;
      } else if (c === ':' && separated) {
        atNodeStart = true; // the value of an explicit (`? `) key, or after a quoted or flow key
        pos++;
      } else if (atNodeStart && (c === '&' || c === '!')) {
        while (pos < line.length && line[pos] !== ' ' && line[pos] !== '\t') pos++; // an anchor or a tag
      } else if (atNodeStart && (c === '[' || c === '{')) {
        flowDepth = 1;
        flowNodeStart = true;
        if (frames.length + flowDepth > max) return tooDeep(pos);
        pos++;
      } else if (atNodeStart && (c === '|' || c === '>')) {
        blockScalarParent = frames.length > 0 ? frames[frames.length - 1].indent : -1;
        break;
      } else if (c === '"' || c === "'") {
        const keyAt = pos;
        quote = c;
        pos = skipQuoted(line, pos + 1, c);
        if (pos < 0) break;
        quote = '';
        if (isKeyIndicator(line, pos) && open(keyAt, 'map')) return tooDeep(keyAt);
        atNodeStart = false;
      } else {
        // a plain scalar: it runs to a `: ` (then it was a key), a ` #` or the end of the line
        const keyAt = pos;
        let key = false;
        while (pos < line.length) {
          const ch = line[pos];
          if (ch === ':' && isKeyIndicator(line, pos)) {
            key = true;
            break;
          }
          if (ch === '#' && (line[pos - 1] === ' ' || line[pos - 1] === '\t')) break;
          pos++;
        }
        if (!key) break;
        if (open(keyAt, 'map')) return tooDeep(keyAt);
        pos++;
        atNodeStart = true;
      }
    }
  }
  return undefined;
}

/** `---` or `...` at the start of a line, alone or followed by white space. */
function isDocumentMarker(line: string): boolean {
  const c = line[0];
  if ((c !== '-' && c !== '.') || line[1] !== c || line[2] !== c) return false;
  return line.length === 3 || line[3] === ' ' || line[3] === '\t';
}

/** After a quoted scalar's opening quote: the index past its closing quote, or -1 when it goes on to the next line. */
function skipQuoted(line: string, pos: number, quote: string): number {
  while (pos < line.length) {
    const c = line[pos];
    if (quote === '"' && c === '\\') pos += 2;
    else if (c === quote) {
      if (quote === "'" && line[pos + 1] === "'")
        pos += 2; // '' is an escaped quote
      else return pos + 1;
    } else pos++;
  }
  return -1;
}

/** A `:` followed by a space, a tab or the end of the line (after optional spaces) marks a key. */
function isKeyIndicator(line: string, pos: number): boolean {
  let i = pos;
  while (line[i] === ' ' || line[i] === '\t') i++;
  if (line[i] !== ':') return false;
  const next = line.at(i + 1);
  return next === undefined || next === ' ' || next === '\t';
}
