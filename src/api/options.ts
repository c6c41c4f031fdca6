import { isIP } from 'node:net';

/** What the REST API accepts and from whom; every field has a safe default. */
export interface ApiOptions {
  /** largest request body, in bytes (after Content-Encoding is undone) */
  maxBodyBytes?: number;
  /** deepest nesting of collections in a JSON or YAML body */
  maxDepth?: number;
  /** YAML alias uses allowed per document (the yaml library's `maxAliasCount`) */
  maxAliasCount?: number;
  /** how long one YAML body may take to parse on the parser thread */
  yamlParseTimeoutMs?: number;
  /** when set, every request needs `Authorization: Bearer <token>` */
  token?: string;
  /** origins (`scheme://host[:port]`) allowed besides the API's own address, for Origin and Host */
  allowOrigins?: string[];
  /** the host the API is bound to, as given to listen: its name is then not a foreign Host */
  host?: string;
  /** take artefacts that set a secret (a password, a token) in clear text; refused otherwise (docs/security.md, "Secrets") */
  allowSecrets?: boolean;
}

export type ApiSettings = Required<Omit<ApiOptions, 'token' | 'host'>> & Pick<ApiOptions, 'token' | 'host'>;

/**
 * 1 MiB: artefacts are kilobytes, and a YAML body of a few hundred kB can
 * already take a second to parse. 64 levels: no artefact comes near, and
 * every parser and validator downstream is far from its stack limit.
 */
export const API_DEFAULTS = {
  maxBodyBytes: 1024 * 1024,
  maxDepth: 64,
  maxAliasCount: 100,
  yamlParseTimeoutMs: 1000,
  allowSecrets: false,
} as const;

/** The yaml library aborts the process near a thousand compact levels; the pre-scan must stay well below. */
export const MAX_DEPTH_CEILING = 256;

export function apiSettings(options: ApiOptions = {}): ApiSettings {
  const settings = { ...API_DEFAULTS, allowOrigins: [] as string[], ...definedOnly(options) };
  positiveInteger(settings.maxBodyBytes, 'maxBodyBytes');
  positiveInteger(settings.maxDepth, 'maxDepth');
  if (settings.maxDepth > MAX_DEPTH_CEILING) throw new Error(`maxDepth: at most ${MAX_DEPTH_CEILING} (deeper YAML is not safe to parse)`);
  if (!Number.isInteger(settings.maxAliasCount) || settings.maxAliasCount < 0)
    throw new Error(`maxAliasCount: must be an integer >= 0, not ${settings.maxAliasCount}`);
  positiveInteger(settings.yamlParseTimeoutMs, 'yamlParseTimeoutMs');
  if (settings.token !== undefined) checkToken(settings.token, 'token');
  return { ...settings, allowOrigins: settings.allowOrigins.map((o) => normalizeOrigin(o, 'allowOrigins')) };
}

/**
 * A token must be sendable as it is in `Authorization: Bearer <token>`:
 * visible ASCII, no spaces (base64, base64url and hex tokens all are). One
 * with a space or a non-ASCII character would start the API and then refuse
 * every request, since a client cannot send it unchanged.
 */
export function checkToken(token: string, where: string): void {
  if (token === '') throw new Error(`${where}: must not be empty`);
  const bad = /[^\x21-\x7e]/.exec(token);
  if (bad) {
    const what = bad[0] === ' ' ? 'a space' : `character U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
    throw new Error(
      `${where}: must be visible ASCII without spaces, as it is sent in Authorization: Bearer <token>; it has ${what} at position ${bad.index + 1}`,
    );
  }
}

function definedOnly(options: ApiOptions): ApiOptions {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}

function positiveInteger(value: number, name: string): void {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}: must be a positive integer, not ${value}`);
}

/** `scheme://host[:port]` in the form browsers send in Origin (lower case, no default port, no path). */
export function normalizeOrigin(origin: string, where: string): string {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new Error(`${where}: '${origin}' is not an origin like http://host:port`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash || url.pathname !== '/') {
    throw new Error(`${where}: '${origin}' is not an origin like http://host:port (http or https, no path)`);
  }
  return url.origin;
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and `localhost`: addresses no other machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h.startsWith('::ffff:127.') || /^(0+:){7}0*1$/.test(h);
  return false;
}

// ---- what `eddy server run` was given (its flags: src/cli/server-run.ts) ----

/** The API flags of `eddy server run`, as given. */
export interface ApiFlags {
  maxBodyBytes?: number;
  maxDepth?: number;
  token?: string;
  allowOrigins?: string[];
  insecure?: boolean;
  allowSecrets?: boolean;
}

/**
 * The API options for `eddy server run`: the flags, the token from
 * EDDY_API_TOKEN when no flag gives one (an argument shows in `ps`, the
 * environment does not), and the refusal to face the network unprotected.
 */
export function apiOptionsFromFlags(flags: ApiFlags, host: string, env: NodeJS.ProcessEnv): ApiOptions {
  const token = flags.token ?? (env.EDDY_API_TOKEN === '' ? undefined : env.EDDY_API_TOKEN); // set but empty: none
  if (flags.token === undefined && token !== undefined) checkToken(token, 'EDDY_API_TOKEN');
  if (!isLoopbackHost(host) && token === undefined && !flags.insecure) {
    throw new Error(
      `--api-host ${host} is reachable from other machines, and anyone who reaches the API can publish, read and stop anything: ` +
        'set a token (--api-token or EDDY_API_TOKEN), or accept the risk with --insecure',
    );
  }
  return { maxBodyBytes: flags.maxBodyBytes, maxDepth: flags.maxDepth, token, allowOrigins: flags.allowOrigins, host, allowSecrets: flags.allowSecrets };
}
