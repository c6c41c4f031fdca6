import { expect } from 'chai';
import { KERNEL_DROPS_LOG_EVERY_MS, KernelDropLog } from '../../../src/connectors/udp/kernel-drop-log';

/** The udp onramp's readings of the kernel's drop count, driven by hand: no datagram is sent. */
describe('udp onramp: the log of the kernel drops', () => {
  const url = '/onramp/gelf/main';
  let lines: string[];
  let log: KernelDropLog;
  beforeEach(() => {
    lines = [];
    log = new KernelDropLog(url, (line) => lines.push(line));
  });

  it('says nothing while the count stays 0 or is unknown', () => {
    log.observe(0, 0);
    log.observe(undefined, 5_000);
    log.observe(0, 10_000);
    expect(lines).to.deep.equal([]);
  });

  it('warns at the first reading that grew, with the count', () => {
    log.observe(0, 0);
    log.observe(1200, 5_000);
    expect(lines).to.deep.equal([
      `udp onramp ${url}: the kernel dropped 1200 datagrams before eddy read them (a full socket receive buffer; receive_buffer_size asks for a larger one)`,
    ]);
  });

  it('then at most once a minute, with the drops since the last line', () => {
    log.observe(100, 5_000);
    log.observe(150, 10_000); // within the minute: held back
    log.observe(400, 5_000 + KERNEL_DROPS_LOG_EVERY_MS - 1);
    expect(lines).to.have.length(1);
    log.observe(450, 5_000 + KERNEL_DROPS_LOG_EVERY_MS);
    expect(lines[1]).to.equal(`udp onramp ${url}: the kernel dropped 350 more datagrams since the last line (450 since the socket opened)`);
    // a minute later, no new drops: nothing
    log.observe(450, 5_000 + 2 * KERNEL_DROPS_LOG_EVERY_MS);
    expect(lines).to.have.length(2);
    // the next growth after a quiet spell is told at once, counted from the last line
    log.observe(460, 5_000 + 2 * KERNEL_DROPS_LOG_EVERY_MS + 5_000);
    expect(lines[2]).to.equal(`udp onramp ${url}: the kernel dropped 10 more datagrams since the last line (460 since the socket opened)`);
  });
});
