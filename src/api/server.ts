import express, { type NextFunction, type Request, type Response } from 'express';
import type { Server } from 'node:http';
import { EddyError, invalid, notFound } from '../core/errors';
import type { Runtime } from '../runtime/runtime';
import { isKind, type Kind } from '../runtime/urls';
import { parseBody, send } from './negotiate';
import { version } from '../version';

const STATUS: Record<EddyError['code'], number> = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
  unsupported_media_type: 415,
  internal: 500,
};

/** The REST API: a thin layer over the Runtime; every error is `{error}` with a status, and the runtime keeps running. */
export function createApi(runtime: Runtime): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(express.text({ type: () => true, limit: '10mb' }));

  const kindOf = (req: Request): Kind => {
    const kind = req.params.kind as string;
    if (!isKind(kind)) throw notFound(`unknown artefact kind '${kind}' (kinds: pipeline, onramp, offramp, binding)`);
    return kind;
  };
  const route =
    (handler: (req: Request, res: Response) => unknown) =>
    async (req: Request, res: Response, next: NextFunction): Promise<void> => {
      try {
        await handler(req, res);
      } catch (err) {
        next(err);
      }
    };

  app.get('/version', (req, res) => send(req, res, 200, { version }, true));
  // for orchestrators: 200 while every instance runs, 503 naming the ones that do not
  app.get('/health', (req, res) => {
    const health = runtime.health();
    send(req, res, health.status === 'ok' ? 200 : 503, health, true);
  });
  app.get('/:kind', route((req, res) => send(req, res, 200, runtime.list(kindOf(req)))));
  // answered once stored (with --data-dir), so an acknowledged change survives a kill -9
  app.post('/:kind', route(async (req, res) => {
    const artefact = runtime.publish(kindOf(req), parseBody(req));
    await runtime.persisted();
    send(req, res, 201, artefact);
  }));
  app.get('/:kind/:aid', route((req, res) => send(req, res, 200, runtime.describe(kindOf(req), req.params.aid as string))));
  app.delete('/:kind/:aid', route(async (req, res) => {
    const artefact = runtime.unpublish(kindOf(req), req.params.aid as string);
    await runtime.persisted();
    send(req, res, 200, artefact);
  }));
  app.post(
    '/:kind/:aid/:iid',
    route(async (req, res) => {
      const kind = kindOf(req);
      const params = instanceParams(req);
      send(req, res, 201, await runtime.activate(kind, req.params.aid as string, req.params.iid as string, params));
    }),
  );
  app.get('/:kind/:aid/:iid', route((req, res) => send(req, res, 200, runtime.getInstance(kindOf(req), req.params.aid as string, req.params.iid as string))));
  app.delete(
    '/:kind/:aid/:iid',
    route(async (req, res) => send(req, res, 200, await runtime.deactivate(kindOf(req), req.params.aid as string, req.params.iid as string))),
  );
  app.use((req, res) => send(req, res, 404, { error: `no route for ${req.method} ${req.path}` }));
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof EddyError) return send(req, res, STATUS[err.code], { error: err.message });
    const status = (err as { status?: number }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return send(req, res, status, { error: (err as Error).message }); // e.g. a body over the size limit
    }
    runtime.logger.error(`API ${req.method} ${req.path} failed: ${(err as Error).stack ?? String(err)}`);
    send(req, res, 500, { error: `internal error: ${(err as Error).message}` });
  });
  return app;
}

/** Binding activation takes optional placeholder values: a map of strings. */
function instanceParams(req: Request): Record<string, string> {
  if (typeof req.body !== 'string' || req.body.trim() === '') return {};
  const body = parseBody(req);
  if (body === null || body === undefined) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw invalid('body: must be a map of placeholder names to strings');
  for (const [k, v] of Object.entries(body)) if (typeof v !== 'string') throw invalid(`body.${k}: must be a string`);
  return body as Record<string, string>;
}

export function listen(app: express.Express, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('listening', () => resolve(server));
    server.once('error', (err) => reject(new Error(`API cannot listen on ${host}:${port}: ${err.message}`)));
  });
}
