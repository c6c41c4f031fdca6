/**
 * The otel onramp over TLS, with the official OTLP exporters as clients:
 * OTLP/gRPC with TLS credentials (and a client certificate for mutual TLS),
 * OTLP/HTTP over HTTPS; a certificate swapped on disk served on both ports.
 */
import { expect } from 'chai';
import { credentials } from '@grpc/grpc-js';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as OTLPHttpTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { readFileSync } from 'node:fs';
import { liveCopy, makeCerts, peerCertificate, swapIn, type Identity, type TestCerts } from '../../helpers/certs';
import { eventually } from '../../helpers/runtime';
import { recordingLogger } from '../net-helpers';
import { attributes, exportSpans, otelFlow, recordedSpans, signalOf, SUCCESS, type OtelFlow } from './helpers';

describe('otel onramp: TLS', () => {
  let certs: TestCerts;
  let flow: OtelFlow | undefined;
  let live: Identity;
  let port: number;
  let httpPort: number;

  before(() => (certs = makeCerts()));
  after(() => certs.remove());
  beforeEach(() => (live = liveCopy(certs)));
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
  });

  /** Starts the onramp on ports 0 and learns the ports it got from its log. */
  const start = async (tls: object) => {
    const logger = recordingLogger();
    flow = await otelFlow({ host: '127.0.0.1', port: 0, http_port: 0, tls }, { logger });
    const bound = (protocol: string) => Number(new RegExp(`OTLP/${protocol} listening on https://127\\.0\\.0\\.1:(\\d+)/`).exec(logger.lines.join('\n'))?.[1]);
    port = bound('gRPC');
    httpPort = bound('HTTP');
  };
  const ca = () => readFileSync(certs.ca);
  /** An OTLP/gRPC trace exporter to the onramp over TLS, trusting the test CA, with a client certificate if given. */
  const grpcExporter = (client?: Identity) =>
    new OTLPTraceExporter({
      url: `https://localhost:${port}`,
      credentials: client ? credentials.createSsl(ca(), readFileSync(client.key), readFileSync(client.cert)) : credentials.createSsl(ca()),
    });
  const spans = (service: string) => recordedSpans({ 'service.name': service }, ['op']);
  const services = () => flow!.collected.out.map((e) => attributes((e.data as { resource?: { attributes?: unknown } }).resource?.attributes)['service.name']);

  it('takes spans from the OTLP/gRPC exporter with TLS credentials; an exporter without TLS gets nothing through', async () => {
    await start(live);
    const exporter = grpcExporter();
    expect((await exportSpans(exporter, spans('grpc-tls'))).code).to.equal(SUCCESS);
    await exporter.shutdown();
    await eventually(() => flow!.collected.out.length === 1, 5000, 'the resource of the export');
    expect(signalOf(flow!.collected.out[0])).to.equal('trace');
    expect(services()).to.deep.equal([{ stringValue: 'grpc-tls' }]);
    const plain = new OTLPTraceExporter({ url: `http://127.0.0.1:${port}`, credentials: credentials.createInsecure(), timeoutMillis: 3000 });
    expect((await exportSpans(plain, spans('plain'))).code).to.not.equal(SUCCESS);
    await plain.shutdown();
  });

  it('takes spans from the OTLP/HTTP exporter over HTTPS on http_port', async () => {
    await start(live);
    const exporter = new OTLPHttpTraceExporter({ url: `https://localhost:${httpPort}/v1/traces`, httpAgentOptions: { ca: ca() } });
    expect((await exportSpans(exporter, spans('http-tls'))).code).to.equal(SUCCESS);
    await exporter.shutdown();
    await eventually(() => flow!.collected.out.length === 1, 5000, 'the resource of the export');
    expect(services()).to.deep.equal([{ stringValue: 'http-tls' }]);
  });

  it('with require_client_cert, refuses an exporter without a client certificate and takes one with it', async () => {
    await start({ ...live, ca: certs.ca, require_client_cert: true });
    const anonymous = new OTLPTraceExporter({ url: `https://localhost:${port}`, credentials: credentials.createSsl(ca()), timeoutMillis: 3000 });
    expect((await exportSpans(anonymous, spans('anonymous'))).code).to.not.equal(SUCCESS);
    await anonymous.shutdown();
    const mutual = grpcExporter(certs.client);
    expect((await exportSpans(mutual, spans('mutual'))).code).to.equal(SUCCESS);
    await mutual.shutdown();
    await eventually(() => flow!.collected.out.length === 1, 5000, 'the export of the exporter with a certificate');
    expect(services()).to.deep.equal([{ stringValue: 'mutual' }]);
  });

  it('serves a certificate swapped on disk on both ports, without a restart', async () => {
    await start(live);
    expect((await peerCertificate(port, certs.ca)).serialNumber).to.equal('1001');
    expect((await peerCertificate(httpPort, certs.ca)).serialNumber).to.equal('1001');
    swapIn(certs, live);
    await eventually(async () => (await peerCertificate(port, certs.ca)).serialNumber === '1002', 15000, 'the new certificate on the gRPC port');
    await eventually(async () => (await peerCertificate(httpPort, certs.ca)).serialNumber === '1002', 15000, 'the new certificate on the OTLP/HTTP port');
    const exporter = grpcExporter();
    expect((await exportSpans(exporter, spans('after-swap'))).code).to.equal(SUCCESS);
    await exporter.shutdown();
  });
});
