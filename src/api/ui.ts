import express, { type Request, type Response, type Router } from 'express';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HttpError } from './http-error';

/** The web console's static files: `ui/` at the package root (shipped by package.json `files`). */
export const UI_DIR = join(__dirname, '../../../ui');

/**
 * What the console's pages may load: only the API's own origin, no inline
 * scripts, no frames. The page talks to nothing but the API that served it.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * GET /ui: the web console. Mounted after the Origin/Host check and before
 * the token check: the files are public (no data in them), and a browser
 * cannot send a bearer token when it navigates; the page itself then sends
 * the token the user types with every API request.
 */
export function uiRouter(dir = UI_DIR): Router {
  const router = express.Router();
  router.use((_req: Request, res: Response, next) => {
    res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  if (existsSync(dir)) router.use(express.static(dir, { index: 'index.html', redirect: true, fallthrough: true }));
  router.use((req: Request, _res: Response, next) =>
    next(new HttpError(404, existsSync(dir) ? `no file ${req.originalUrl} in the web console` : `the web console's files are missing (looked in ${dir})`)),
  );
  return router;
}
