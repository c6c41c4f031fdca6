import type { experimental, ServerCredentials } from '@grpc/grpc-js';
import { requirePackage } from '../../core/packages';
import type { TlsIdentity } from '../../net/tls';

const grpc = requirePackage<typeof import('@grpc/grpc-js')>('@grpc/grpc-js', 'the otel connector');

type CertificateProvider = experimental.CertificateProvider;
type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

/**
 * The otel onramp's certificate as grpc-js takes one that can change: a
 * certificate provider (grpc-js's `experimental` API, the one its xDS
 * support uses). `update` hands the listeners the new identity and grpc-js
 * sets it on its HTTP/2 server, so new connections get it without a
 * restart. The files are watched by the onramp (_shared/tls.ts), which
 * feeds both this and the OTLP/HTTP server.
 */
export class GrpcIdentity implements CertificateProvider {
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();

  constructor(private identity: TlsIdentity) {}

  update(identity: TlsIdentity): void {
    this.identity = identity;
    for (const listener of this.caListeners) this.sendCa(listener);
    for (const listener of this.identityListeners) this.sendIdentity(listener);
  }

  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    // later, not now: grpc-js adds its own watcher after the listeners, and would miss an update made during the call
    process.nextTick(() => this.caListeners.has(listener) && this.sendCa(listener));
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    process.nextTick(() => this.identityListeners.has(listener) && this.sendIdentity(listener));
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
  }

  private sendCa(listener: CaListener): void {
    listener(this.identity.ca === undefined ? null : { caCertificate: this.identity.ca });
  }

  private sendIdentity(listener: IdentityListener): void {
    listener({ certificate: this.identity.cert, privateKey: this.identity.key });
  }
}

/**
 * Server credentials that follow `provider`; with a CA, clients are asked
 * for a certificate, and refused without one when `requireClientCert`.
 */
export function grpcServerCredentials(provider: GrpcIdentity, withCa: boolean, requireClientCert: boolean): ServerCredentials {
  // grpc-js 1.14 declares (caProvider, identityProvider) but passes them on in the constructor's
  // order, (identity, ca): the identity goes first, the CA provider (or null: no client certificates) second
  return grpc.experimental.createCertificateProviderServerCredentials(provider, withCa ? provider : null, requireClientCert);
}
