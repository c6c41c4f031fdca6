/** Facility names by code (RFC 5424 table 1), as the original runtime reports them. */
export const FACILITIES = [
  'kern',
  'user',
  'mail',
  'daemon',
  'auth',
  'syslog',
  'lpr',
  'news',
  'uucp',
  'cron',
  'authpriv',
  'ftp',
  'ntp',
  'audit',
  'alert',
  'clockd',
  'local0',
  'local1',
  'local2',
  'local3',
  'local4',
  'local5',
  'local6',
  'local7',
] as const;

/** Severity names by code (RFC 5424 table 2). */
export const SEVERITIES = ['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'] as const;

/**
 * A decoded syslog message. Keys are present only when the message had them,
 * except `structured_data` (null when there is none) and `msg`.
 */
export interface SyslogMessage {
  hostname?: string;
  severity?: string;
  facility?: string;
  /** nanoseconds since the epoch, UTC */
  timestamp?: bigint;
  protocol: 'RFC3164' | 'RFC5424';
  protocol_version?: number;
  appname?: string;
  msgid?: string;
  /** `{sd_id: [{param: value}, …]}`: a list because a param name may repeat */
  structured_data: Record<string, Record<string, string>[]> | null;
  procid?: string;
  msg: string;
}
