import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:https';
import type { SecureContextOptions, TlsOptions } from 'node:tls';
import { answerPlainHttp } from '../../net/plain-http';
import { createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import { decodeJsonResources, decodeResources, encodeResponse, encodeStatus, SIGNALS, SIGNAL_SPECS, type Signal } from './otlp';

/**
 * What the otel onramp does with an export request, whichever transport
 * brought it (onramp.ts builds it; the gRPC service and this HTTP server
 * share it, so both answer alike).
 */
export interface Intake {
  /** false while the onramp must refuse requests (breaker triggered, or no pipeline reads it yet) */
  reading(): boolean;
  /** the delay refused exporters are asked to wait, ms */
  readonly retryDelayMs: number;
  enabled(signal: Signal): boolean;
  /** a request refused while not reading: counted and logged */
  refused(signal: Signal, peer: string): void;
  /** a request of a disabled signal, dropped: reported on `err`; returns the number of items it held (the partial success's rejected count) */
  dropped(signal: Signal, originUri: string, resources: Record<string, unknown>[] | undefined): number;
  /** a request that is not OTLP: reported on `err` with its bytes */
  bad(message: string, bytes: Buffer, originUri: string): void;
  /** the decoded resources, one event each, and the request's size (ramp_bytes); false (nothing taken) when no pipeline reads the onramp any more */
  accepted(signal: Signal, resources: Record<string, unknown>[], originUri: string, bytes: number): boolean;
}

/** The largest request body taken, compressed and after decompression (as gRPC's default message limit). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** google.rpc.Code values for the Status bodies of error answers. */
const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;
const RESOURCE_EXHAUSTED = 8;
const UNIMPLEMENTED = 12;
const UNAVAILABLE = 14;

const PATHS = new Map<string, Signal>(SIGNALS.map((signal) => [SIGNAL_SPECS[signal].httpPath, signal]));

/** A request that cannot be served: its status code, google.rpc code and why. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The media type of a Content-Type header, lowercased, without parameters. */
const mediaType = (header: string | undefined) => (header ?? '').split(';')[0].trim().toLowerCase();

/**
 * The OTLP/HTTP part of the otel onramp: POST /v1/traces, /v1/logs and
 * /v1/metrics with protobuf (`application/x-protobuf`) or JSON
 * (`application/json`) bodies, gzip or deflate compressed or not, answered
 * as the OTLP/HTTP spec says: 200 with an Export response in the request's
 * content type (a partial success when a disabled signal's items were
 * dropped), 400 with a google.rpc.Status for a body that is not OTLP, 503
 * with Retry-After while the onramp is not reading (retryable), and 404,
 * 405, 413, 415 for requests that can never succeed.
 */
export class OtlpHttpReceiver {
  private readonly server: Server | TlsServer;
  private port = 0;

  /** With `tls`, HTTPS (its certificate replaced by `setSecureContext`). */
  constructor(
    private readonly intake: Intake,
    private readonly logWarning: (message: string) => void,
    tls?: TlsOptions,
  ) {
    const serve = (req: IncomingMessage, res: ServerResponse) => void this.serve(req, res);
    this.server = tls === undefined ? createServer(serve) : createTlsServer(tls, serve);
    // an http:// export is told to use https:// rather than answered with nothing
    if (tls !== undefined) answerPlainHttp(this.server as TlsServer);
  }

  /** the port it listens on (the one picked for port 0) */
  get boundPort(): number {
    return this.port;
  }

  /** TLS: the certificate for connections made from now on. */
  setSecureContext(options: SecureContextOptions): void {
    (this.server as TlsServer).setSecureContext(options);
  }

  /** Binds the port; a port in use rejects naming the address (the activation fails with it). */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const failed = (err: Error) => reject(new Error(`cannot listen on ${host}:${port} (OTLP/HTTP): ${err.message}`));
      this.server.once('error', failed);
      this.server.listen(port, host, () => {
        this.server.off('error', failed);
        this.server.on('error', (err: Error) => this.logWarning(`OTLP/HTTP server: ${err.message}`));
        this.port = (this.server.address() as { port: number }).port;
        resolve(this.port);
      });
    });
  }

  /** Stops taking connections; requests in progress may finish for `graceMs`, then every connection is dropped. */
  close(graceMs: number): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server.listening) return resolve();
      const force = setTimeout(() => this.server.closeAllConnections(), graceMs);
      this.server.close(() => {
        clearTimeout(force);
        resolve();
      });
      this.server.closeIdleConnections();
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    const signal = PATHS.get(path);
    const type = mediaType(req.headers['content-type']);
    // the answer's body is in the request's format when that is one of OTLP's, else JSON
    const json = type !== 'application/x-protobuf';
    try {
      if (signal === undefined) throw new Refusal(404, NOT_FOUND, `no OTLP service at ${path}: POST to /v1/traces, /v1/logs or /v1/metrics`);
      if (req.method !== 'POST') {
        res.setHeader('Allow', 'POST');
        throw new Refusal(405, UNIMPLEMENTED, `${req.method} ${path}: only POST is served`);
      }
      if (type !== 'application/x-protobuf' && type !== 'application/json') {
        throw new Refusal(
          415,
          INVALID_ARGUMENT,
          `Content-Type ${JSON.stringify(req.headers['content-type'] ?? '')} is not served: use application/x-protobuf or application/json`,
        );
      }
      const peer = `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? 0}`.replace(/^::ffff:/, '');
      const originUri = `svc-otel://${peer}/${this.port}/${signal}`;
      if (!this.intake.enabled(signal)) {
        const bytes = await this.body(req);
        let resources: Record<string, unknown>[] | undefined;
        try {
          resources = json ? decodeJsonResources(signal, bytes) : decodeResources(signal, bytes);
        } catch {
          resources = undefined; // dropped all the same; nothing to count
        }
        const rejected = this.intake.dropped(signal, originUri, resources);
        return this.answer(
          res,
          200,
          json,
          encodeResponse(signal, json, { rejected, message: `this onramp has ${signal}: false; the ${signal} data was dropped` }),
        );
      }
      if (!this.intake.reading()) {
        // refused before the body is read: the exporter keeps the data and sends it again after the delay
        this.intake.refused(signal, peer);
        throw this.unavailable(res);
      }
      const bytes = await this.body(req);
      let resources: Record<string, unknown>[];
      try {
        resources = json ? decodeJsonResources(signal, bytes) : decodeResources(signal, bytes);
      } catch (err) {
        const message = `not an OTLP ${signal} export request (${type}): ${(err as Error).message}`;
        this.intake.bad(message, bytes, originUri);
        throw new Refusal(400, INVALID_ARGUMENT, message);
      }
      // the pipeline may have gone while the body was read: then the exporter is asked to send it again
      if (!this.intake.accepted(signal, resources, originUri, bytes.length)) throw this.unavailable(res);
      this.answer(res, 200, json, encodeResponse(signal, json));
    } catch (err) {
      if (err instanceof Refusal) {
        this.answer(res, err.status, json, encodeStatus(err.code, err.message, json));
      } else {
        this.logWarning(`OTLP/HTTP request ${req.method} ${path}: ${(err as Error).message}`);
        this.answer(res, 500, json, encodeStatus(13, (err as Error).message, json));
      }
      // what was not read of the body is drained, so the connection can serve the next request
      req.resume();
    }
  }

  /** 503 with Retry-After: OTLP/HTTP's retryable refusal. */
  private unavailable(res: ServerResponse): Refusal {
    res.setHeader('Retry-After', String(Math.ceil(this.intake.retryDelayMs / 1000)));
    return new Refusal(
      503,
      UNAVAILABLE,
      `this onramp is not reading (its circuit breaker is triggered, or no pipeline reads it yet); retry in ${this.intake.retryDelayMs} ms`,
    );
  }

  private answer(res: ServerResponse, status: number, json: boolean, body: Buffer): void {
    if (res.headersSent) return;
    res.writeHead(status, { 'Content-Type': json ? 'application/json' : 'application/x-protobuf', 'Content-Length': body.length });
    res.end(body);
  }

  /** The request body, decompressed; refused past MAX_BODY_BYTES (either side of the decompression) or with a coding not served. */
  private async body(req: IncomingMessage): Promise<Buffer> {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) throw new Refusal(413, RESOURCE_EXHAUSTED, `the body (${declared} bytes) is larger than ${MAX_BODY_BYTES} bytes`);
    const coding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    let stream: Readable = req;
    if (coding === 'gzip') stream = req.pipe(createGunzip());
    else if (coding === 'deflate') stream = req.pipe(createInflate());
    else if (coding !== 'identity' && coding !== '') {
      throw new Refusal(415, INVALID_ARGUMENT, `Content-Encoding ${JSON.stringify(coding)} is not served: use gzip, deflate or none`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_BODY_BYTES)
          throw new Refusal(413, RESOURCE_EXHAUSTED, `the body is larger than ${MAX_BODY_BYTES} bytes${stream === req ? '' : ' once decompressed'}`);
        chunks.push(chunk);
      }
    } catch (err) {
      if (err instanceof Refusal) throw err;
      throw new Refusal(400, INVALID_ARGUMENT, `the body cannot be read (${coding}): ${(err as Error).message}`);
    }
    return Buffer.concat(chunks);
  }
}
