/**
 * The HTTP listener of the rest and ws onramps and of the REST API, set up
 * once: plain HTTP, or with `tls` HTTPS whose certificate files are read now
 * (a file that cannot be read is an error naming its field) and that tells
 * a plain request on its port which scheme to use instead of answering
 * nothing. The caller binds it, and watches the certificate
 * (`reloadOnChange`) once it listens.
 */
import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:https';
import { answerPlainHttp } from './plain-http';
import { readServerTls, serverOptions, type FieldName, type ServerTlsConfig } from './tls';

export interface HttpServerOptions {
  /** Nagle off: small answers go out at once */
  readonly noDelay?: boolean;
  /** what a plain request is told to use instead: https (default) or wss */
  readonly scheme?: 'https' | 'wss';
  /** how an error names a TLS field (the API names its flags) */
  readonly field?: FieldName;
}

export function httpServer(tls: ServerTlsConfig | undefined, options: HttpServerOptions = {}, listener?: RequestListener): Server {
  const base: ServerOptions = options.noDelay ? { noDelay: true } : {};
  if (tls === undefined) return listener ? createServer(base, listener) : createServer(base);
  const secureOptions = { ...serverOptions(tls, readServerTls(tls, options.field)), ...base };
  const secure: TlsServer = listener ? createTlsServer(secureOptions, listener) : createTlsServer(secureOptions);
  answerPlainHttp(secure, options.scheme);
  return secure;
}
