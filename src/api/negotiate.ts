import type { Request, Response } from 'express';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { EddyError, invalid } from '../core/errors';

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];

/** YAML when the client's Accept names a YAML type; JSON otherwise (including no Accept or anything else). */
export function wantsYaml(req: Request): boolean {
  const accept = req.get('accept') ?? '';
  return accept
    .split(',')
    .map((part) => part.split(';')[0].trim().toLowerCase())
    .some((type) => YAML_TYPES.includes(type));
}

export function send(req: Request, res: Response, status: number, body: unknown, jsonOnly = false): void {
  if (!jsonOnly && wantsYaml(req)) {
    res.status(status).type('application/yaml').send(toYaml(body));
  } else {
    res.status(status).type('application/json').send(JSON.stringify(body));
  }
}

/**
 * Parses a request body by its Content-Type: application/json or
 * application/yaml (parameters such as charset are fine). A missing type is
 * read as YAML, which accepts JSON too. Anything else is 415.
 */
export function parseBody(req: Request): unknown {
  const raw = typeof req.body === 'string' ? req.body : '';
  const type = (req.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/json') {
    try {
      return JSON.parse(raw);
    } catch (err) {
      throw invalid(`body: invalid JSON: ${(err as Error).message}`);
    }
  }
  if (type === '' || YAML_TYPES.includes(type)) {
    try {
      return parseYaml(raw);
    } catch (err) {
      throw invalid(`body: invalid YAML: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  throw new EddyError('unsupported_media_type', `Content-Type '${type}' is not supported: use application/json or application/yaml`);
}
