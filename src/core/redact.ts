/**
 * Credentials in URLs, masked wherever eddy writes text a person may read:
 * the API's error answers, log lines, the reasons of GET /status and
 * /health, and any string of a config the API gives back
 * (schema/secrets.ts). A driver's error carries the URL it was given
 * (`connect ECONNREFUSED … http://elastic:s3cret@127.0.0.1:9299`), so a
 * message is masked where it leaves, once, rather than in every connector.
 */

/** What a secret is shown as. */
export const REDACTED = '***';

/**
 * `scheme://userinfo@` anywhere in a text. The authority runs to the first
 * `/`, `?`, `#`, whitespace, quote or angle bracket; inside it the userinfo
 * runs to the LAST `@`, as URL parsers read it, so an unencoded `@` in a
 * password (`http://u:p@ss@host`) is masked whole, never its tail shown.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#'"<>`]*)@/gi;

/**
 * `text` with the password of every URL in it masked:
 * `amqp://user:pass@host` → `amqp://user:***@host`. A userinfo without a
 * password is masked whole (`https://TOKEN@host` → `https://***@host`):
 * token authentication puts the token there (nats, git hosts).
 */
export function maskUrlCredentials(text: string): string {
  if (!text.includes('@')) return text;
  return text.replace(URL_USERINFO, (_all, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    return colon < 0 ? `${scheme}${REDACTED}@` : `${scheme}${userinfo.slice(0, colon)}:${REDACTED}@`;
  });
}

/** Whether `text` holds a URL with credentials (what `maskUrlCredentials` would change). */
export function hasUrlCredentials(text: string): boolean {
  return maskUrlCredentials(text) !== text;
}

/** Whether any string in `value` holds a URL with credentials. */
export function hasUrlCredentialsDeep(value: unknown): boolean {
  if (typeof value === 'string') return hasUrlCredentials(value);
  if (Array.isArray(value)) return value.some(hasUrlCredentialsDeep);
  return typeof value === 'object' && value !== null && Object.values(value).some(hasUrlCredentialsDeep);
}

/** `value` with `maskUrlCredentials` applied to every string in it (a copy where anything changed; the value itself is not changed). */
export function maskUrlCredentialsDeep<T>(value: T): T {
  if (typeof value === 'string') return maskUrlCredentials(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => maskUrlCredentialsDeep(v)) as T;
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskUrlCredentialsDeep(v)])) as T;
  }
  return value;
}
