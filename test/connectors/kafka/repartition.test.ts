import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigFile } from '../../../src/config/load';
import { createLogger } from '../../../src/core/logger';
import { Runtime } from '../../../src/runtime/runtime';
import { docBlock } from '../../helpers/readme';
import { unique, useSharedKafka } from './helpers';

/** docs/connectors/kafka.md, "Repartition by a field": the block as printed, on topics of its own. */
describe('kafka: the repartition flow of the docs', function () {
  this.timeout(60_000);
  const kafka = useSharedKafka();
  let dir: string;
  let runtime: Runtime | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-repartition-'))));
  afterEach(async () => {
    await runtime?.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes every event of one app into one partition of the new topic, keyed by the app, whatever partition it came from', async () => {
    const [input, output, group] = [unique('logs'), unique('logs-by-app'), unique('rekey')];
    await kafka.peer.createTopic(input, 4);
    await kafka.peer.createTopic(output, 4);
    const apps = ['web', 'db', 'cache', 'auth', 'mail', 'queue'];
    // each app spread over every input partition
    const messages = Array.from({ length: 240 }, (_, i) => ({ partition: i % 4, value: JSON.stringify({ app: apps[i % apps.length], n: i }) }));
    await kafka.peer.produce(input, messages);

    const block = docBlock('docs/connectors/kafka.md', '### Repartition by a field', 'yaml')
      .replaceAll('127.0.0.1:9092', kafka.broker)
      .replace('topics: [logs]', `topics: [${input}], rdkafka_options: { auto.offset.reset: earliest }`)
      .replace('topic: logs-by-app', `topic: ${output}`)
      .replace('group_id: rekey', `group_id: ${group}`);
    const file = join(dir, 'repartition.yaml');
    writeFileSync(file, block);
    runtime = await new Runtime({ logger: createLogger('silent') }).start();
    await loadConfigFile(runtime, file);

    const read = await kafka.peer.readTopic(output, messages.length);
    const partitionsOf = new Map<string, Set<number>>();
    for (const m of read) {
      const { app } = JSON.parse(m.value!.toString()) as { app: string };
      expect(m.key?.toString()).to.equal(app);
      partitionsOf.set(app, (partitionsOf.get(app) ?? new Set()).add(m.partition));
    }
    expect([...partitionsOf.keys()].sort()).to.deep.equal([...apps].sort());
    for (const [app, partitions] of partitionsOf) expect([...partitions], app).to.have.length(1);
    expect(new Set([...partitionsOf.values()].map((p) => [...p][0])).size, 'the apps spread over more than one partition').to.be.above(1);
  });
});
