import express, { type NextFunction, type Request, type Response } from 'express';
import type { Server } from 'node:http';
import { listenLazily } from './listen';
import { EddyError } from '../core/errors';
import { maskUrlCredentials } from '../core/redact';
import type { Runtime } from '../runtime/runtime';
import { BodyReader } from './body';
import { originGuard, tokenGuard } from './guard';
import { HttpError } from './http-error';
import { JSON_ONLY, JSON_OR_YAML, JSON_TYPE, negotiate, send } from './negotiate';
import { openApiDocument } from './openapi';
import { apiSettings, type ApiOptions } from './options';
import { operations, type Operation } from './routes';
import { uiRouter } from './ui';

export type { ApiOptions } from './options';

const STATUS: Record<EddyError['code'], number> = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
  unsupported_media_type: 415,
  internal: 500,
};

/**
 * The REST API: a thin layer over the Runtime, built from the route table in
 * routes.ts. Every error is `{error}` with a status, and the runtime keeps
 * running. In order, a request meets: the Origin/Host check (403), the token
 * (401), its route (404, 405), Accept (406), its body (415, 413, 400), and
 * then the runtime.
 */
export function createApi(runtime: Runtime, options: ApiOptions = {}): express.Express {
  const settings = apiSettings(options);
  const app = express();
  app.disable('x-powered-by');
  const ops: Operation[] = operations(runtime, () => openApiDocument(ops, runtime.registries, { token: settings.token !== undefined }), {
    allowSecrets: settings.allowSecrets,
  });
  const bodies = new BodyReader(settings);

  app.use(originGuard(settings.allowOrigins, settings.host));
  app.use('/ui', uiRouter()); // static files, public: before the token check (see ui.ts)
  if (settings.token !== undefined) app.use(tokenGuard(settings.token));

  const byPath = new Map<string, Operation[]>();
  for (const op of ops) byPath.set(op.path, [...(byPath.get(op.path) ?? []), op]);
  for (const [path, pathOps] of byPath) {
    const route = app.route(expressPath(path));
    for (const op of pathOps) route[op.method](handler(op, bodies));
    // HEAD goes with GET (express answers it from the GET route), OPTIONS with every path
    const allow = [...pathOps.flatMap((op) => (op.method === 'get' ? ['GET', 'HEAD'] : [op.method.toUpperCase()])), 'OPTIONS'].join(', ');
    route.all((req, res, next) => {
      if (req.method !== 'OPTIONS') return next(new HttpError(405, `${req.method} is not allowed on ${req.path}; allowed: ${allow}`, { Allow: allow }));
      res.setHeader('Allow', allow);
      // a CORS preflight from an allowed origin (the guard has set Access-Control-Allow-Origin)
      if (res.getHeader('Access-Control-Allow-Origin') !== undefined && req.headers['access-control-request-method'] !== undefined) {
        res.setHeader('Access-Control-Allow-Methods', allow);
        res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Accept');
        res.setHeader('Access-Control-Max-Age', '600');
      }
      res.status(204).end();
    });
  }
  app.use((req, _res, next) => next(new HttpError(404, `no route for ${req.method} ${req.path} (the routes are in GET /openapi.json)`)));

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const type = negotiate(req.get('accept'), (res.locals.offers as readonly string[] | undefined) ?? JSON_OR_YAML) ?? JSON_TYPE;
    if (err instanceof HttpError) {
      for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
      return send(res, type, err.status, failure(err.message));
    }
    if (err instanceof EddyError) return send(res, type, STATUS[err.code], failure(err.message));
    const status = (err as { status?: number }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return send(res, type, status, failure((err as Error).message)); // e.g. a path segment that is not valid percent-encoding
    }
    const thrown = err as { stack?: string; message?: string } | null | undefined; // whatever a handler threw: not always an Error
    runtime.logger.error(`API ${req.method} ${req.path} failed: ${thrown?.stack ?? String(err)}`);
    send(res, type, 500, failure(`internal error: ${thrown?.message ?? String(err)}`));
  });
  return app;
}

/**
 * Every error answer, `{error}`: a driver's message may carry the URL it
 * was given, credentials and all (an elastic node's `http://user:pass@…`),
 * so they are masked here, where every message leaves (core/redact.ts).
 */
function failure(message: string): { error: string } {
  return { error: maskUrlCredentials(message) };
}

/** `/pipeline/{artefact_id}` → `/pipeline/:artefact_id` */
function expressPath(template: string): string {
  return template.replace(/\{([^}]+)\}/g, ':$1');
}

function handler(op: Operation, bodies: BodyReader) {
  const offers = op.jsonOnly ? JSON_ONLY : JSON_OR_YAML;
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    res.locals.offers = offers;
    try {
      const type = negotiate(req.get('accept'), offers);
      if (type === undefined) {
        res.locals.offers = JSON_ONLY; // the 406 itself can only be JSON
        throw new HttpError(
          406,
          `Accept '${req.get('accept')}' refuses application/json and accepts none of the other types this answers with (${offers.join(', ')})`,
        );
      }
      let body: unknown;
      if (op.body) body = await bodies.read(req, res);
      else BodyReader.checkType(req); // the body is ignored, but must still say it is JSON or YAML
      const reply = await op.run({ params: req.params as Record<string, string>, body, query: req.query });
      if (reply.stream) return reply.stream(req, res);
      if (reply.type !== undefined) res.status(reply.status).type(reply.type).send(reply.body);
      else send(res, type, reply.status, reply.body);
    } catch (err) {
      next(err);
    }
  };
}

/** Serves an API app built already (serveApi, tests); `eddy server run` builds its app on the first request instead. */
export function listen(app: express.Express, host: string, port: number): Promise<Server> {
  return listenLazily(() => app, host, port);
}
