import { s } from './typed';
import type { Marked, Schema } from './typed';

/**
 * Config fields that many types repeat, built once so that they cannot
 * drift apart: the same bounds, the same default, the same wording unless a
 * type has something more precise to say.
 */

/**
 * Where every listening socket binds unless its config says otherwise:
 * loopback, so a new listener is never reachable from the network by
 * accident (docs/security.md). `0.0.0.0` or `::` opens it to every interface.
 */
export const DEFAULT_LISTEN_HOST = '127.0.0.1';

interface PortOptions {
  readonly default?: number;
  readonly description?: string;
}

/** The address a listening socket binds (tcp, udp, otel, rest, ws). */
export function listenHost(description = 'address to listen on; the default accepts only local clients, 0.0.0.0 (or ::) every interface') {
  return s.string({ minLength: 1, default: DEFAULT_LISTEN_HOST, description });
}

/** The port a listening socket binds; 0 asks the system for a free one. */
export function listenPort<const O extends PortOptions = object>(options?: O): Schema<number> & Marked<O> {
  return s.integer({ minimum: 0, maximum: 65535, description: 'port to listen on; 0 picks a free one', ...options }) as Schema<number> & Marked<O>;
}

/** The host a client connects to (a name or an address). */
export function connectHost(description: string) {
  return s.string({ minLength: 1, description });
}

/** The port a client connects to: a real port, never 0. */
export function connectPort<const O extends PortOptions = object>(options?: O): Schema<number> & Marked<O> {
  return s.integer({ minimum: 1, maximum: 65535, description: 'port to connect to', ...options }) as Schema<number> & Marked<O>;
}

/** The user a client logs in as. */
export function userName(description = 'user (role) to log in as') {
  return s.string({ minLength: 1, description });
}

/** The user's password; empty for none (the server trusts the client by other means). A secret: shown as "***". */
export function password(description: string) {
  return s.string({ default: '', writeOnly: true, description });
}

/**
 * TLS for a listening socket (rest, ws, tcp, otel): the server's
 * certificate and key, and optionally the CA that client certificates are
 * checked against. Every field is a file path (confined by `--allow-path`
 * like other paths; the key file is a path, not the key, so no secret);
 * the files are read at publish, to refuse one that is missing or
 * unreadable, and watched while the instance runs (connectors/_shared/tls.ts).
 */
export function serverTls(description = 'serve TLS with this certificate; absent: plaintext') {
  return s.object(
    {
      cert: s.string({
        path: 'read',
        minLength: 1,
        description: "file of the server's certificate (PEM), followed by its intermediate certificates if any; reloaded when it changes",
      }),
      key: s.string({ path: 'read', minLength: 1, description: "file of the certificate's private key (PEM, unencrypted); reloaded when it changes" }),
      ca: s.string({
        path: 'read',
        minLength: 1,
        description: 'file of the CA certificates (PEM) a client certificate is checked against; with it, clients are asked for one',
      }),
      require_client_cert: s.boolean({ default: false, description: 'refuse a client without a certificate signed by ca (mutual TLS); needs ca' }),
    },
    { required: ['cert', 'key'], description },
  );
}

/**
 * The headers whose values are credentials, matched whatever their case:
 * shown as "***" and refused in clear over the API like any secret
 * (docs/security.md, "Secrets"). `set-cookie` is a response header, but a
 * cookie is a cookie whichever way it travels.
 */
export const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-auth-token', 'cookie', 'set-cookie'] as const;

/** The name of the field beside a header map that lists more secret headers. */
export const SECRET_HEADERS_FIELD = 'secret_headers';

/**
 * A map of headers to send (a rest request's, an OTLP export's gRPC
 * metadata, a nats message's): the credential headers and those listed in
 * the sibling `secret_headers` (`secretHeaders()`) are secrets.
 */
export function headerMap<T, I>(values: Schema<T, I>, description: string) {
  return s.record(values, { default: {}, description, secretKeys: CREDENTIAL_HEADERS, secretKeysFrom: SECRET_HEADERS_FIELD });
}

/** `secret_headers`: more header names (any case) whose values are secrets, beside `headers`. */
export function secretHeaders() {
  return s.array(s.string({ minLength: 1 }), {
    description: `more headers whose values are secrets, shown as "***" and refused in clear over the API (besides ${CREDENTIAL_HEADERS.join(', ')})`,
  });
}
