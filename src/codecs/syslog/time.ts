/** Timestamps: syslog text to nanoseconds since the epoch (BigInt) and back. */

const NS_PER_MS = 1_000_000n;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;
export const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export function parseRfc3339(text: string): bigint | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, year, month, day, hour, minute, second, fraction = '', zone] = m;
  let ms = Date.UTC(+year, +month - 1, +day, +hour, +minute, +second);
  if (zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    ms -= sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
  }
  return BigInt(ms) * NS_PER_MS + BigInt(fraction.padEnd(9, '0') || '0');
}

/**
 * An RFC 3164 timestamp (`Mmm dd hh:mm:ss`, UTC) has no year. The year is
 * the ingest time's, or the one before when that would put the message more
 * than a day in the future (a December message read in January).
 */
export function parseRfc3164(month: string, day: number, time: string, ingestNs: bigint): bigint | undefined {
  const monthIndex = MONTHS.indexOf(month);
  const t = /^(\d{2}):(\d{2}):(\d{2})$/.exec(time);
  if (monthIndex < 0 || !t || day < 1 || day > 31) return undefined;
  const ingestMs = Number(ingestNs / NS_PER_MS);
  const ingestYear = new Date(ingestMs).getUTCFullYear();
  const at = (year: number) => Date.UTC(year, monthIndex, day, +t[1], +t[2], +t[3]);
  let ms = at(ingestYear);
  if (ms > ingestMs + 86_400_000) ms = at(ingestYear - 1);
  return BigInt(ms) * NS_PER_MS;
}

/** RFC 3339 in UTC with microseconds (RFC 5424 allows at most six fraction digits; nanoseconds are cut). */
export function formatRfc3339(ns: bigint): string {
  const seconds = ns / 1_000_000_000n;
  const micros = (ns % 1_000_000_000n) / 1000n;
  const base = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  // the shortest fraction that keeps every microsecond: .003, not .003000
  return micros === 0n ? `${base}Z` : `${base}.${String(micros).padStart(6, '0').replace(/0+$/, '')}Z`;
}

/** Latest timestamp a four-digit year can write: 9999-12-31T23:59:59.999999999Z. */
export const MAX_TIMESTAMP_NS = BigInt(Date.UTC(9999, 11, 31, 23, 59, 59)) * NS_PER_MS + 999_999_999n;

export function formatRfc3164(ns: bigint): string {
  const date = new Date(Number(ns / NS_PER_MS));
  const day = String(date.getUTCDate()).padStart(2, ' ');
  return `${MONTHS[date.getUTCMonth()]} ${day} ${date.toISOString().slice(11, 19)}`;
}
