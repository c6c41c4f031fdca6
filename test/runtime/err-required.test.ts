import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EddyEvent } from '../../src/core/event';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { defer } from 'rxjs';
import { eventually, registerWatchedOnramp } from '../helpers/runtime';

describe('err_required', () => {
  it('an onramp with err_required reads nothing until its err port is connected too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eddy-errreq-'));
    const source = join(dir, 'in.json');
    writeFileSync(source, '{"ok":1}\nbroken\n{"ok":2}\n');
    const runtime = await new Runtime({ logger: createLogger('silent') }).start();
    // the file onramp, plus a record of when its frames are first subscribed: reading starts only then
    let reading = false;
    registerWatchedOnramp(runtime, 'file', (frames) => defer(() => ((reading = true), frames)));
    try {
      runtime.publish('onramp', { id: 'src', type: 'watched_file', err_required: true, config: { source } });
      runtime.publish('pipeline', { id: 'good', interface: {}, nodes: [], links: { in: ['out'] } });
      runtime.publish('pipeline', { id: 'bad', interface: {}, nodes: [], links: { in: ['out'] } });
      runtime.publish('binding', { id: 'outs', links: { '/onramp/src/{instance}/out': ['/pipeline/good/{instance}/in'] } });
      runtime.publish('binding', { id: 'errs', links: { '/onramp/src/{instance}/err': ['/pipeline/bad/{instance}/in'] } });
      await runtime.activate('binding', 'outs', 'main');
      const good: EddyEvent[] = [];
      runtime
        .pipeline('/pipeline/good/main')!
        .output('out')
        .subscribe((e) => good.push(e));
      // the binding is wired once activate resolves: without the gate the file would be subscribed by now
      expect(reading, 'the file is read before err is connected').to.equal(false);
      expect(runtime.onramp('/onramp/src/main')!.runtime.counters.out).to.equal(0);

      await runtime.activate('binding', 'errs', 'main');
      const bad: EddyEvent[] = [];
      runtime
        .pipeline('/pipeline/bad/main')!
        .output('out')
        .subscribe((e) => bad.push(e));
      await eventually(() => good.length === 2 && bad.length === 1, 3000, 'both ports to receive');
      expect(reading).to.equal(true);
      expect(good.map((e) => e.data)).to.deep.equal([{ ok: 1 }, { ok: 2 }]);
      expect((bad[0].data as { raw: string }).raw).to.equal('broken');
    } finally {
      await runtime.shutdown();
    }
  });
});
