// Talks to the API that served this page (same origin), with the token the
// user typed: kept in sessionStorage, so it lives as long as the tab.
const TOKEN_KEY = 'eddy.token';

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export function headers(extra = {}) {
  const h = { accept: 'application/json', ...extra };
  if (token()) h.authorization = `Bearer ${token()}`;
  return h;
}

/**
 * How long a read (GET) may take before it is given up. The console polls
 * GET /status and shares the poll under way, so one request that never
 * answered (a connection lost without a reset) would otherwise freeze the
 * console for good. Writes are not timed out: activating an instance may
 * legitimately take long (a connector logging in), and giving up would not
 * undo it.
 */
export const READ_TIMEOUT_MS = 5000;

/** One API call: the parsed JSON answer, or an ApiError with the API's own message. */
export async function api(method, path, body, contentType = 'application/json') {
  const init = { method, headers: headers() };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers['content-type'] = contentType;
  }
  if (method === 'GET') init.signal = AbortSignal.timeout(READ_TIMEOUT_MS);
  let res;
  let text;
  try {
    res = await fetch(path, init);
    text = await res.text();
  } catch (err) {
    if (err.name === 'TimeoutError') throw new ApiError(0, `no answer within ${READ_TIMEOUT_MS / 1000} s`);
    throw err;
  }
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  if (!res.ok) throw new ApiError(res.status, parsed && parsed.error ? parsed.error : `${res.status} ${res.statusText}`);
  return parsed;
}

/** Text the user pasted goes as it is: JSON when it looks like JSON, YAML otherwise (the API parses both). */
export function contentTypeOf(text) {
  return /^\s*[[{]/.test(text) ? 'application/json' : 'application/yaml';
}

export const KINDS = ['onramp', 'pipeline', 'offramp', 'binding'];

/** `/onramp/metronome/main/out` (or a binding's link with a scheme: `svc:///onramp/…`) → its parts */
export function parseUrl(url) {
  const [, kind, artefact, instance, port] = url.replace(/^[a-z]+:\/\/[^/]*/, '').split('/');
  return { kind, artefact, instance, port };
}

/** How the console names an instance: `/kind/artefact/instance`, the API's path of it */
export function instancePath(instance) {
  return `/${instance.kind}/${instance.artefact}/${instance.instance}`;
}
