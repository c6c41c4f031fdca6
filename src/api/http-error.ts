/** An error the HTTP layer itself answers (401, 403, 405, 406, 413, 415, 503), with the headers that go with it. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}
