/**
 * The dates of a listener's certificate (_shared/tls.ts `outOfDate`): an
 * expired one and one not yet valid are named with the date that makes them
 * so; a valid one is not. The clock is an argument: "not yet valid" is the
 * valid test certificate seen from the day before it was made.
 */
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { makeCerts, type TestCerts } from '../helpers/certs';
import { outOfDate } from '../../src/net/tls';

describe('TLS certificate dates', () => {
  let certs: TestCerts;

  before(() => (certs = makeCerts()));
  after(() => certs.remove());

  it('names an expired certificate with its notAfter, one not yet valid with its notBefore, and says nothing of a valid one', () => {
    const expired = readFileSync(certs.expired.cert);
    const notAfter = new X509Certificate(expired).validTo;
    expect(outOfDate(expired, 'x.pem')).to.equal(`the TLS certificate x.pem expired on ${notAfter} (its notAfter): clients refuse it`);
    const valid = readFileSync(certs.server.cert);
    expect(outOfDate(valid, 'server.pem')).to.equal(undefined);
    const notBefore = new X509Certificate(valid).validFrom;
    const dayBefore = new Date(Date.parse(notBefore) - 24 * 3600 * 1000);
    expect(outOfDate(valid, 'server.pem', dayBefore)).to.equal(
      `the TLS certificate server.pem is not valid before ${notBefore} (its notBefore): clients refuse it until then`,
    );
  });
});
