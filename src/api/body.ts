import express, { type Request, type RequestHandler, type Response } from 'express';
import { invalid } from '../core/errors';
import { jsonTooDeep, tooDeepMessage } from './depth';
import { HttpError } from './http-error';
import { JSON_TYPE, YAML_TYPES } from './negotiate';
import type { ApiSettings } from './options';
import { yamlParser } from './yaml-parser';

const BODY_TYPES: readonly string[] = [JSON_TYPE, ...YAML_TYPES];
const TYPES_NAMED = 'application/json or application/yaml (also application/x-yaml, text/yaml)';

/**
 * A request body, in the order that costs least: the Content-Type (415)
 * before reading, the size while reading (413), the nesting depth on the raw
 * text (400), and only then the parser. A body without a Content-Type is
 * refused: reading it as anything would let any web page post one (a form
 * or `fetch` without preflight can send text/plain, never application/json).
 */
export class BodyReader {
  private readonly readText: RequestHandler;

  constructor(private readonly settings: ApiSettings) {
    this.readText = express.text({ type: () => true, limit: settings.maxBodyBytes });
  }

  /**
   * Refuses (415) a request that carries a body without a JSON or YAML
   * Content-Type, also where the operation ignores the body: a form posted
   * across sites must not activate anything. Returns the media type, or
   * undefined when there is no body.
   */
  static checkType(req: Request): string | undefined {
    if (!hasBody(req)) return undefined;
    const type = (req.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (type === '') throw new HttpError(415, `a request body needs a Content-Type: ${TYPES_NAMED}`);
    if (!BODY_TYPES.includes(type)) throw new HttpError(415, `Content-Type '${type}' is not supported: use ${TYPES_NAMED}`);
    return type;
  }

  /** The parsed body, or undefined when the request has none (or only white space). */
  async read(req: Request, res: Response): Promise<unknown> {
    const type = BodyReader.checkType(req);
    if (type === undefined) return undefined;
    const text = await this.text(req, res);
    if (text.trim() === '') return undefined;
    const { maxDepth } = this.settings;
    if (type === JSON_TYPE) {
      const tooDeep = jsonTooDeep(text, maxDepth);
      if (tooDeep) throw invalid(tooDeepMessage(tooDeep, maxDepth));
      try {
        return JSON.parse(text);
      } catch (err) {
        throw invalid(`body: invalid JSON: ${(err as Error).message}`);
      }
    }
    // the depth pre-scan of YAML runs on the parser thread too: it is linear, but slower than JSON's
    return yamlParser.parse(text, {
      maxDepth,
      maxAliasCount: this.settings.maxAliasCount,
      // aliases may repeat parts of a document, but not make it much larger than a body could be
      maxExpandedBytes: 4 * this.settings.maxBodyBytes,
      timeoutMs: this.settings.yamlParseTimeoutMs,
    });
  }

  private text(req: Request, res: Response): Promise<string> {
    return new Promise((resolve, reject) =>
      this.readText(req, res, (err?: unknown) => {
        if (err === undefined) return resolve(typeof req.body === 'string' ? req.body : '');
        const e = err as { status?: number; type?: string; message?: string };
        if (e.type === 'entity.too.large') {
          return reject(new HttpError(413, `body: larger than ${this.settings.maxBodyBytes} bytes, the API's limit (--api-max-body)`));
        }
        reject(new HttpError(typeof e.status === 'number' && e.status >= 400 && e.status < 500 ? e.status : 400, `body: ${e.message ?? JSON.stringify(err)}`));
      }),
    );
  }
}

/** A body is announced by a positive Content-Length or by Transfer-Encoding. */
function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length'] ?? 0);
  return !Number.isNaN(length) && length > 0;
}
