import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { HttpError } from './http-error';
import { isLoopbackHost } from './options';

/**
 * Who may talk to the API. Two checks, before anything else runs:
 *
 * - Host and Origin must name the API itself. A web page the user opens can
 *   send requests to 127.0.0.1:9898 (cross-site) or point a DNS name of its
 *   own at 127.0.0.1 (DNS rebinding); the browser then sends the page's
 *   Origin, or the attacker's name as Host. The API's own names are the
 *   address the connection arrived at, `localhost` when that is loopback,
 *   and the host it was told it is bound to; everything else needs
 *   `--api-allow-origin`. An allowed foreign origin also gets CORS headers,
 *   so a browser UI served from there can use the API.
 * - With a token, every request needs `Authorization: Bearer <token>`,
 *   compared exactly (case matters: a token is a secret, not a name) and in
 *   constant time. CORS preflights (OPTIONS) are exempt: browsers
 *   never send credentials with them, and they reveal only the methods.
 */
export function originGuard(allowOrigins: string[], boundHost: string | undefined): RequestHandler {
  const allowed = new Set(allowOrigins);
  const allowedHosts = new Set(allowOrigins.map((o) => new URL(o).host));
  return (req: Request, res: Response, next: NextFunction) => {
    const own = ownHosts(req, boundHost);
    const host = req.headers.host;
    if (host !== undefined) {
      const normalized = normalizeHost(host);
      if (normalized === undefined || (!own.has(normalized) && !allowedHosts.has(normalized))) {
        return next(
          new HttpError(
            403,
            `Host '${host}' is not this API's address; if it is a name of this server, allow it with --api-allow-origin ${req.protocol}://${host}`,
          ),
        );
      }
    }
    const origin = req.headers.origin;
    if (origin !== undefined) {
      let normalized: URL | undefined;
      try {
        normalized = new URL(origin);
      } catch {
        normalized = undefined;
      }
      if (normalized && allowed.has(normalized.origin)) {
        res.setHeader('Access-Control-Allow-Origin', normalized.origin);
        res.setHeader('Vary', 'Origin');
      } else if (normalized?.protocol !== `${req.protocol}:` || !own.has(normalized.host)) {
        // own origin: this API's scheme (https when it serves TLS) and one of its addresses
        return next(new HttpError(403, `Origin '${origin}' is foreign to this API; allow it with --api-allow-origin ${origin}`));
      }
    }
    next();
  };
}

/** `host[:port]` as URL.host writes it (lower case, port 80 left out), or undefined when it is no host name or address. */
function normalizeHost(host: string): string | undefined {
  if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(:\d{1,5})?$/.test(host)) return undefined;
  try {
    return new URL(`http://${host}`).host;
  } catch {
    return undefined;
  }
}

function ownHosts(req: Request, boundHost: string | undefined): Set<string> {
  const port = req.socket.localPort;
  const names: string[] = [];
  const local = req.socket.localAddress ?? '';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(local);
  if (mapped) names.push(mapped[1]);
  names.push(local.includes(':') ? `[${local}]` : local);
  if (isLoopbackHost(local)) names.push('localhost');
  if (boundHost !== undefined && !['0.0.0.0', '::', '[::]', ''].includes(boundHost)) {
    names.push(boundHost.includes(':') && !boundHost.startsWith('[') ? `[${boundHost}]` : boundHost);
  }
  const hosts = new Set<string>();
  for (const name of names) {
    const normalized = normalizeHost(`${name}:${port}`);
    if (normalized) hosts.add(normalized);
  }
  return hosts;
}

export function tokenGuard(token: string): RequestHandler {
  const expected = digest(token);
  return (req: Request, _res: Response, next: NextFunction) => {
    if (req.method === 'OPTIONS') return next();
    const challenge = 'Bearer realm="eddy"';
    const match = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    if (!match) return next(new HttpError(401, 'this API needs a token: send Authorization: Bearer <token>', { 'WWW-Authenticate': challenge }));
    // byte for byte, case included; equal-length digests, so the comparison takes the same time whatever the token sent
    if (!timingSafeEqual(digest(match[1]), expected)) {
      return next(new HttpError(401, 'the bearer token is wrong', { 'WWW-Authenticate': `${challenge}, error="invalid_token"` }));
    }
    next();
  };
}

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}
