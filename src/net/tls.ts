import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import { createSecureContext, type SecureContextOptions, type TlsOptions } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { Static } from '../schema/typed';
import type { serverTls } from '../schema/fields';

/** A listener's `tls` config (schema/fields.ts `serverTls`), after validation. */
export type ServerTlsConfig = Static<ReturnType<typeof serverTls>>;

/** The certificate files, read: what a TLS server's secure context is made of. */
export interface TlsIdentity {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca?: Buffer;
}

/** How often the files are checked for a change (fs.watchFile polls: it works on every file system, and for files replaced by a rename). */
export const TLS_POLL_MS = 1000;

type TlsField = 'cert' | 'key' | 'ca' | 'require_client_cert';

/** What an error calls a field: a config's `tls.cert`; the API's are its flags (`--api-tls-cert`). */
export type FieldName = (field: TlsField) => string;

const configField: FieldName = (field) => `tls.${field}`;

/**
 * Reads the files and checks that they make a TLS identity, throwing an
 * error that names the field (`tls.key: cannot read /etc/eddy/key.pem: …`):
 * the repository prefixes `config.` and answers 400 at publish.
 */
export function readServerTls(tls: ServerTlsConfig, name: FieldName = configField): TlsIdentity {
  if (tls.require_client_cert && tls.ca === undefined) {
    throw new Error(`${name('require_client_cert')}: needs ${name('ca')}, the CA certificates that client certificates are checked against`);
  }
  const read = (field: 'cert' | 'key' | 'ca', path: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new Error(`${name(field)}: cannot read ${path}: ${(err as Error).message}`);
    }
  };
  const cert = read('cert', tls.cert);
  const key = read('key', tls.key);
  const ca = tls.ca === undefined ? undefined : read('ca', tls.ca);
  // one part at a time, so that the error names the file at fault
  if (ca !== undefined) usable(name('ca'), tls.ca, 'holds no PEM certificate', { ca }, !ca.includes('-----BEGIN CERTIFICATE-----'));
  usable(name('cert'), tls.cert, 'is not a PEM certificate', { cert });
  usable(name('key'), tls.key, 'is not the PEM private key of the certificate', { cert, key });
  return { cert, key, ca };
}

/** Throws `field: path why (cause)` when the options do not make a secure context (or `refused` says so already). */
function usable(field: string, path: string | undefined, why: string, options: SecureContextOptions, refused = false): void {
  if (refused) throw new Error(`${field}: ${path} ${why}`);
  try {
    createSecureContext(options);
  } catch (err) {
    throw new Error(`${field}: ${path} ${why} (${(err as Error).message})`);
  }
}

/** The options a Node TLS server (tls, https) is created with: the identity, and whether clients are asked for a certificate. */
export function serverOptions(tls: ServerTlsConfig, identity: TlsIdentity): TlsOptions {
  return {
    ...identity,
    // with a CA, clients are asked for a certificate; refused without a valid one only when it is required
    requestCert: identity.ca !== undefined,
    rejectUnauthorized: tls.require_client_cert,
  };
}

/**
 * Why clients refuse the certificate (the first in the PEM file) at `now`:
 * expired (past its notAfter) or not yet valid (before its notBefore);
 * undefined while it is valid. Node serves such a certificate without a
 * word, and every client then fails its handshake: this is said at start
 * and at each reload instead.
 */
export function outOfDate(cert: Buffer, path: string, now = new Date()): string | undefined {
  const x509 = new X509Certificate(cert);
  if (now.getTime() > Date.parse(x509.validTo)) return `the TLS certificate ${path} expired on ${x509.validTo} (its notAfter): clients refuse it`;
  if (now.getTime() < Date.parse(x509.validFrom))
    return `the TLS certificate ${path} is not valid before ${x509.validFrom} (its notBefore): clients refuse it until then`;
  return undefined;
}

export interface Log {
  info(message: string): void;
  warn(message: string): void;
}

/**
 * Watches a listener's certificate files and hands the new identity to
 * `apply` when one changes: connections made after that see the new
 * certificate, those already open keep theirs. Files that cannot be used
 * (a key written before its certificate, a half-written file) leave the
 * previous identity in place, with a warning; the next change tries again.
 * A certificate that is expired or not yet valid is warned of when the watch
 * starts (with its listener) and when it is reloaded.
 */
export class CertificateWatch {
  private readonly paths: string[];
  private readonly changed = (current: Stats, previous: Stats): void => {
    if (current.mtimeMs === previous.mtimeMs && current.ino === previous.ino && current.size === previous.size) return;
    this.reload();
  };

  constructor(
    private readonly tls: ServerTlsConfig,
    private readonly apply: (identity: TlsIdentity) => void,
    private readonly log: Log,
    private readonly label: string,
    private readonly name: FieldName = configField,
    interval = TLS_POLL_MS,
  ) {
    this.paths = [tls.cert, tls.key, ...(tls.ca === undefined ? [] : [tls.ca])];
    // the file the server was made with a moment ago, read again for its dates
    let served: Buffer | undefined;
    try {
      served = readFileSync(tls.cert);
    } catch (err) {
      log.warn(`${label}: cannot check the TLS certificate's dates: ${(err as Error).message}`);
    }
    if (served !== undefined) this.checkDates(served);
    // not persistent: a watch never keeps the process alive
    for (const path of new Set(this.paths)) watchFile(path, { persistent: false, interval }, this.changed);
  }

  /** Reads the files again and applies them when they are usable. */
  reload(): void {
    let identity: TlsIdentity;
    try {
      identity = readServerTls(this.tls, this.name);
    } catch (err) {
      this.log.warn(`${this.label}: the TLS files changed but cannot be used; the previous certificate stays: ${(err as Error).message}`);
      return;
    }
    try {
      this.apply(identity);
    } catch (err) {
      this.log.warn(`${this.label}: the new TLS certificate was refused; the previous one stays: ${(err as Error).message}`);
      return;
    }
    this.log.info(`${this.label}: TLS certificate reloaded from ${this.tls.cert}`);
    this.checkDates(identity.cert);
  }

  /** Warns when the certificate served is expired or not yet valid (applied all the same: the files are the operator's choice). */
  private checkDates(cert: Buffer): void {
    const why = outOfDate(cert, this.tls.cert);
    if (why !== undefined) this.log.warn(`${this.label}: ${why}`);
  }

  stop(): void {
    for (const path of new Set(this.paths)) unwatchFile(path, this.changed);
  }
}

/** A Node TLS server (tls.Server, https.Server): its secure context can be replaced while it listens. */
interface SecureServer {
  setSecureContext(options: SecureContextOptions): void;
}

/** Watches the files of `tls` and sets the server's new secure context on a change. */
export function reloadOnChange(server: SecureServer, tls: ServerTlsConfig, log: Log, label: string, name?: FieldName): CertificateWatch {
  return new CertificateWatch(tls, (identity) => server.setSecureContext(identity), log, label, name);
}
