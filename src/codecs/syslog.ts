import type { CodecType } from './codec';
import { parseSyslog } from './syslog/decode';
import { formatSyslog } from './syslog/encode';

/**
 * syslog: RFC 5424 and RFC 3164 messages, one per frame. Decodes to
 * `{hostname, severity, facility, timestamp, protocol, protocol_version,
 * appname, msgid, structured_data, procid, msg}` (see syslog/names.ts);
 * timestamps are UTC nanoseconds as BigInt, and a 3164 timestamp's missing
 * year is taken from the ingest time. Encodes RFC 5424 version 1 unless the
 * value says `protocol: "RFC3164"`; what decoding produced always encodes,
 * `structured_data: null` included.
 */
export const syslog: CodecType = {
  name: 'syslog',
  summary: 'One RFC 5424 or RFC 3164 syslog message per frame; encodes RFC 5424 unless the value says RFC3164.',
  create: () => ({
    name: 'syslog',
    decode: (data, ingestNs) => parseSyslog(data.toString('utf8'), ingestNs),
    encode: (value) => Buffer.from(formatSyslog(value), 'utf8'),
  }),
};
