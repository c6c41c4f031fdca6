import { isDeepStrictEqual } from 'node:util';
import type { BytesResult, CaseResult, Frame, PortResult } from './run';

/** Gaps longer than this are drawn as a time progression (` 600000ms `) instead of dashes. */
const MAX_DASHES = 30;
/** Symbols for actual values that match no letter of the case. */
const UNNAMED = '123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

const json = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));

/**
 * Draws frames as a marble diagram. Values are named by the letter of an
 * expected value they equal, else by a digit listed in the report. In marble
 * syntax a group `(ab)` takes as many frames as it has characters; a
 * notification falling inside that width is drawn after a frame marker,
 * `‹4›c`, which `parseDiagram` reads back: a drawn diagram is a valid
 * expected one.
 */
export function drawMarbles(frames: Frame[], letterOf: (value: unknown) => string): string {
  const byFrame = new Map<number, string[]>();
  for (const f of frames) {
    const symbol = f.kind === 'N' ? letterOf(f.value) : f.kind === 'C' ? '|' : '#';
    byFrame.set(f.frame, [...(byFrame.get(f.frame) ?? []), symbol]);
  }
  let out = '';
  let time = 0;
  for (const [frame, symbols] of [...byFrame].sort((a, b) => a[0] - b[0])) {
    const gap = frame - time;
    // marbles cannot place a notification inside the width of a group before it: say its frame
    if (gap < 0) out += `‹${frame}›`;
    else if (gap > MAX_DASHES) out += `${out === '' ? '' : ' '}${gap}ms `;
    else if (gap > 0) out += '-'.repeat(gap);
    const group = symbols.length === 1 ? symbols[0] : `(${symbols.join('')})`;
    out += group;
    time = frame + group.length; // in virtual time every character of a diagram is a frame, counted from where the group starts
  }
  return out === '' ? '-' : out;
}

/** The first place two values differ, as `path: expected X, got Y`. */
export function firstValueDifference(expected: unknown, actual: unknown, path = ''): string {
  if (isDeepStrictEqual(expected, actual)) return '';
  const isObject = (v: unknown) => typeof v === 'object' && v !== null;
  if (isObject(expected) && isObject(actual) && Array.isArray(expected) === Array.isArray(actual)) {
    const keys = [...new Set([...Object.keys(expected), ...Object.keys(actual)])];
    for (const key of keys) {
      const sub = Array.isArray(expected) ? `${path}[${key}]` : `${path}.${key}`;
      const e = (expected as Record<string, unknown>)[key];
      const a = (actual as Record<string, unknown>)[key];
      if (!(key in expected)) return `${sub}: not expected, got ${json(a)}`;
      if (!(key in actual)) return `${sub}: expected ${json(e)}, missing`;
      const found = firstValueDifference(e, a, sub);
      if (found) return found;
    }
  }
  return `${path || '(value)'}: expected ${json(expected)}, got ${json(actual)}`;
}

function describeFrame(f: Frame | undefined, symbol: (v: unknown) => string): string {
  if (!f) return 'nothing';
  if (f.kind === 'C') return `completion at frame ${f.frame}`;
  if (f.kind === 'E') return `error at frame ${f.frame}`;
  return `'${symbol(f.value)}' at frame ${f.frame} = ${json(f.value)}`;
}

/** A failing port: both diagrams aligned, then the first differing frame with its value difference. */
export function formatPort(port: PortResult, letters: Map<string, unknown>): string {
  const unnamed = new Map<string, string>();
  const symbol = (value: unknown): string => {
    for (const [letter, v] of letters) if (isDeepStrictEqual(v, value)) return letter;
    const key = json(value);
    let s = unnamed.get(key);
    if (!s) unnamed.set(key, (s = UNNAMED[unnamed.size] ?? '?'));
    return s;
  };
  const label = port.port === 'insights' ? 'insights' : `port ${port.port}`;
  const lines = [`${label}:`, `  expected: ${drawMarbles(port.expected, symbol)}`, `  actual:   ${drawMarbles(port.actual, symbol)}`];
  for (const [value, s] of unnamed) lines.push(`    ${s} = ${value}`);
  const i = port.firstDifference;
  // one list may be the shorter
  const e = port.expected[i] as Frame | undefined;
  const a = port.actual[i] as Frame | undefined;
  lines.push(`  first difference, notification ${i + 1}: expected ${describeFrame(e, symbol)}; got ${describeFrame(a, symbol)}`);
  if (e?.kind === 'N' && a?.kind === 'N' && !isDeepStrictEqual(e.value, a.value)) lines.push(`  value ${firstValueDifference(e.value, a.value)}`);
  return lines.join('\n');
}

/** The letters of a case, as their views, for naming actual values. */
export function caseLetters(result: CaseResult): Map<string, unknown> {
  const letters = new Map<string, unknown>(Object.entries(result.letters ?? {}));
  for (const port of result.ports) for (const f of port.expected) if (f.kind === 'N' && f.letter) letters.set(f.letter, f.value);
  return letters;
}

/** The text of a flow's bytes, line by line after `| `; `(no newline at end)` when the last line has none. */
function textLines(text: string): string[] {
  if (text === '') return ['(nothing)'];
  const lines = text.split('\n');
  const ended = lines[lines.length - 1] === '';
  if (ended) lines.pop();
  return [...lines.map((l) => `| ${l}`), ...(ended ? [] : ['(no newline at end)'])];
}

/** A flow case's bytes that differ: both texts, and where they part, with the next few bytes of each. */
export function formatBytes(bytes: BytesResult): string {
  const at = bytes.firstDifference;
  const expected = Buffer.from(bytes.expected);
  const actual = Buffer.from(bytes.actual);
  const before = expected.subarray(0, at).toString().split('\n');
  const excerpt = (b: Buffer) => (at < b.length ? json(b.subarray(at, at + 20).toString()) : 'the end');
  return [
    'bytes written:',
    '  expected:',
    ...textLines(bytes.expected).map((l) => `    ${l}`),
    '  actual:',
    ...textLines(bytes.actual).map((l) => `    ${l}`),
    `  first difference at byte ${at} (line ${before.length}, column ${before[before.length - 1].length + 1}): expected ${excerpt(expected)}, got ${excerpt(actual)}`,
  ].join('\n');
}

/** A case's outcome in words: `✓ name`, or `✗ name` with every failing port drawn. */
export function formatCase(result: CaseResult, indent = '  '): string {
  if (result.passed) return `${indent}✓ ${result.name}`;
  const lines = [`${indent}✗ ${result.name}`];
  if (result.error) lines.push(`${indent}    error: ${result.error}`);
  const letters = caseLetters(result);
  for (const port of result.ports) {
    if (port.firstDifference === -1) continue;
    lines.push(
      ...formatPort(port, letters)
        .split('\n')
        .map((l) => `${indent}    ${l}`),
    );
  }
  if (result.bytes && result.bytes.firstDifference !== -1)
    lines.push(
      ...formatBytes(result.bytes)
        .split('\n')
        .map((l) => `${indent}    ${l}`),
    );
  return lines.join('\n');
}
