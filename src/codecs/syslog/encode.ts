import { FACILITIES, SEVERITIES } from './names';
import { formatRfc3164, formatRfc3339, MAX_TIMESTAMP_NS } from './time';

/**
 * Writes a syslog message from a value shaped like the decoder's output.
 * `protocol` picks the format (RFC 5424 when absent, version 1 by default).
 * Facility and severity default to `user` and `notice`, as logger(1) does.
 * Missing fields become RFC 5424's nil value `-`; `structured_data` may be
 * null (as decoding gives for a message without any) or absent.
 */
export function formatSyslog(value: unknown): string {
  if (typeof value !== 'object' || value === null) throw new Error('syslog: expected an object');
  const v = value as Record<string, unknown>;
  const pri = priority(v.facility, v.severity);
  const timestamp = optionalTimestamp(v.timestamp);
  const msg = optionalString(v.msg, 'msg') ?? '';
  if (v.protocol === 'RFC3164') {
    const host = headerField(v.hostname, 'hostname');
    const app = headerField(v.appname, 'appname');
    const procid = headerField(v.procid, 'procid');
    const tag = app === undefined ? '' : `${app}${procid === undefined ? '' : `[${procid}]`}: `;
    const head = [timestamp === undefined ? undefined : formatRfc3164(timestamp), host].filter((part) => part !== undefined);
    return `<${pri}>${head.map((part) => `${part} `).join('')}${tag}${msg}`;
  }
  if (v.protocol !== undefined && v.protocol !== null && v.protocol !== 'RFC5424') {
    throw new Error(`syslog: unknown protocol ${JSON.stringify(v.protocol)}`);
  }
  const version = v.protocol_version ?? 1;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1 || version > 999) {
    throw new Error('syslog: protocol_version must be an integer from 1 to 999');
  }
  const header = [
    timestamp === undefined ? '-' : formatRfc3339(timestamp),
    headerField(v.hostname, 'hostname') ?? '-',
    headerField(v.appname, 'appname') ?? '-',
    headerField(v.procid, 'procid') ?? '-',
    headerField(v.msgid, 'msgid') ?? '-',
    structuredData(v.structured_data),
  ].join(' ');
  return `<${pri}>${version} ${header}${msg === '' ? '' : ` ${msg}`}`;
}

function priority(facility: unknown, severity: unknown): number {
  const f = FACILITIES.indexOf((facility ?? 'user') as (typeof FACILITIES)[number]);
  const s = SEVERITIES.indexOf((severity ?? 'notice') as (typeof SEVERITIES)[number]);
  if (f < 0) throw new Error(`syslog: unknown facility ${JSON.stringify(facility)}`);
  if (s < 0) throw new Error(`syslog: unknown severity ${JSON.stringify(severity)}`);
  return f * 8 + s;
}

function optionalTimestamp(value: unknown): bigint | undefined {
  if (value === undefined || value === null) return undefined;
  const ns = typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : value;
  if (typeof ns !== 'bigint' || ns < 0n || ns > MAX_TIMESTAMP_NS) throw new Error('syslog: timestamp must be nanoseconds from 1970 to 9999');
  return ns;
}

function optionalString(value: unknown, what: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value !== 'string') throw new Error(`syslog: ${what} must be a string`);
  return value;
}

/** A header field: printable ASCII without spaces, and not the nil value alone. */
function headerField(value: unknown, what: string): string | undefined {
  const text = optionalString(value, what);
  if (text === undefined) return undefined;
  if (!/^[\x21-\x7e]+$/.test(text) || text === '-') throw new Error(`syslog: ${what} must be printable ASCII without spaces`);
  return text;
}

function structuredData(value: unknown): string {
  if (value === undefined || value === null) return '-';
  if (typeof value !== 'object' || Array.isArray(value)) throw new Error('syslog: structured_data must be an object');
  const elements = Object.entries(value as Record<string, unknown>).map(([id, params]) => {
    const list = Array.isArray(params) ? params : [params];
    let element = `[${sdName(id)}`;
    for (const param of list) {
      if (typeof param !== 'object' || param === null) throw new Error(`syslog: structured_data ${id} params must be objects`);
      for (const [name, text] of Object.entries(param as Record<string, unknown>)) {
        element += ` ${sdName(name)}="${String(text).replace(/["\\\]]/g, '\\$&')}"`;
      }
    }
    return `${element}]`;
  });
  return elements.length === 0 ? '-' : elements.join('');
}

function sdName(name: string): string {
  if (!/^[\x21-\x7e]+$/.test(name) || /[=\]"]/.test(name)) throw new Error(`syslog: bad structured-data name ${JSON.stringify(name)}`);
  return name;
}
