import { expect } from 'chai';
import { harnesses } from './harness';
import { runInChild } from './run-child';

/** The resource check must be able to fail: a child with a planted leak is caught, and does not exit by itself. */
describe('connector compliance: the resource check itself', function () {
  this.timeout(30_000);

  it('reports a leaked timer and file descriptor, and the child does not exit by itself', async () => {
    const report = await runInChild('offramp', 'debug', harnesses.debug.offramp!, { error: true }, { leak: true, exitDeadlineMs: 6000 });
    expect(report.startError).to.equal(undefined);
    expect(report.leftovers, report.stderr).to.not.equal(undefined);
    expect(report.leftovers!.resources).to.include('Timeout');
    expect(report.leftovers!.fds).to.have.length(1);
    expect(report.leftovers!.fds[0]).to.match(/ramp-child\.js$/);
    expect(report.exitedByItself).to.equal(false);
  });
});
