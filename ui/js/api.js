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

/** One API call: the parsed JSON answer, or an ApiError with the API's own message. */
export async function api(method, path, body, contentType = 'application/json') {
  const init = { method, headers: headers() };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers['content-type'] = contentType;
  }
  const res = await fetch(path, init);
  const text = await res.text();
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

/** `/onramp/metronome/main/out` (or with a scheme and host: `tremor://localhost/…`) → its parts */
export function parseUrl(url) {
  const [, kind, artefact, instance, port] = url.replace(/^[a-z]+:\/\/[^/]*/, '').split('/');
  return { kind, artefact, instance, port };
}

/** How the console names an instance: `/kind/artefact/instance`, the API's path of it */
export function instancePath(instance) {
  return `/${instance.kind}/${instance.artefact}/${instance.instance}`;
}
