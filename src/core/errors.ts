/**
 * Errors carry what went wrong and where (artefact, node or field). Only the
 * REST layer maps `code` to an HTTP status; nothing below it knows HTTP.
 */
export type ErrorCode =
  | 'invalid' // a malformed body, a pattern violation, an unknown type or codec
  | 'not_found'
  | 'conflict' // id exists, instances still running, system artefact
  | 'unsupported_media_type'
  | 'internal';

/** The error every eddy API throws for bad input: `code` says which kind (the REST API maps it to a status). */
export class EddyError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'EddyError';
  }
}

export const invalid = (message: string) => new EddyError('invalid', message);
export const notFound = (message: string) => new EddyError('not_found', message);
export const conflict = (message: string) => new EddyError('conflict', message);

/**
 * `value`, which an invariant of the caller says is there: the checked form
 * of `value!`. Missing, it throws an internal error naming `what` (a bug in
 * eddy, never bad input).
 */
export function present<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) throw new Error(`internal error: ${what} is missing`);
  return value;
}
