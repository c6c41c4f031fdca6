import type { Request, Response } from 'express';
import type { JsonSchema } from '../schema/json-schema';

/**
 * The one route table: the express app is built from it (server.ts) and so
 * is the OpenAPI document (openapi.ts), so no route can exist undocumented,
 * and 405's Allow header lists exactly what the table has for a path.
 */
export interface Operation {
  method: 'get' | 'post' | 'delete';
  /** an OpenAPI path template: `/pipeline/{artefact_id}/{instance_id}` */
  path: string;
  operationId: string;
  summary: string;
  /** more than the summary says, when there is more (OpenAPI `description`) */
  description?: string;
  tag: string;
  /** answers in JSON only (no YAML) */
  jsonOnly?: boolean;
  body?: { schema: string; required: boolean; description: string };
  /** the media type of its successful replies when they are neither JSON nor YAML (a stream, Prometheus text) */
  produces?: string;
  /** the query parameters it reads */
  query?: { name: string; description: string; schema: JsonSchema }[];
  /** by status: what it means and the schema (a name in components.schemas) of the body; no schema: the error body */
  responses: Record<number, { description: string; schema?: string }>;
  run(input: OperationInput): Reply | Promise<Reply>;
}

export interface OperationInput {
  params: Record<string, string>;
  body: unknown;
  /** the parsed query string; empty when there is none */
  query?: Record<string, unknown>;
}

export interface Reply {
  status: number;
  body: unknown;
  /** the body is text of this media type, sent as it is (Prometheus text) */
  type?: string;
  /** the operation answers by itself on the raw response (a stream of Server-Sent Events); body is ignored */
  stream?: (req: Request, res: Response) => void;
}
