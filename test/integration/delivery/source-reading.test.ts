/**
 * A source that stops reading (its breaker holds it, or it says so itself:
 * kafka exactly-once restoring or committing) tells the stateful nodes
 * downstream, through every pipeline in between, so that they do not take
 * the pause for silence of its partitions (window::aggregate idle_timeout,
 * PartitionedState.sourceReading).
 */
import { expect } from 'chai';
import { Subject, map } from 'rxjs';
import type { Frame, OfframpContext, OnrampType } from '../../../src/connectors/connector';
import type { PartitionedState } from '../../../src/core/state';
import { Runtime } from '../../../src/runtime/runtime';
import { registriesWith, startTwoPipelineFlow } from './helpers';

describe('a source that stops reading', () => {
  let runtime: Runtime | undefined;
  afterEach(async () => {
    await runtime?.shutdown();
    runtime = undefined;
  });

  it("tells the stateful nodes two pipelines down: its breaker's holds and its own, each change once", async () => {
    const own = new Subject<boolean>();
    const onramp: OnrampType<Record<string, never>> = {
      name: 'pausing',
      defaultCodec: 'json',
      configSchema: { type: 'object', additionalProperties: false, properties: {} },
      create: () => ({ frames: new Subject<Frame>(), readingChanges: own, pause: () => undefined, resume: () => undefined }),
    };
    let sink: OfframpContext | undefined;
    const registries = registriesWith(
      [onramp],
      [
        {
          name: 'gate',
          defaultCodec: 'json',
          autoAck: true,
          configSchema: { type: 'object', additionalProperties: false, properties: {} },
          create: (_config: unknown, ctx: OfframpContext) => {
            sink = ctx;
            return { send: () => undefined };
          },
        },
      ],
    );
    // a stateful node that only records what it hears
    const heard: [string, boolean][] = [];
    const state: PartitionedState = {
      partitions: () => [],
      snapshot: () => new Map(),
      takeChanges: () => new Map(),
      restore: () => undefined,
      release: () => undefined,
      sourceReading: (source, reading) => void heard.push([source, reading]),
    };
    registries.operators.register('test::listens', {
      name: 'test::listens',
      create: () => ({ state, apply: (input) => input.pipe(map((event) => ({ port: 'out', event }))) }),
    });
    runtime = await startTwoPipelineFlow(registries, 'pausing', { id: 'listen', type: 'test::listens' }, 'gate');
    const src = '/onramp/src/main';
    const reads = (reading: boolean): [string, boolean] => [src, reading];
    expect(heard, 'at the start').to.deep.equal([reads(true)]);
    sink!.trigger();
    expect(heard, 'the breaker holds it').to.deep.equal([reads(true), reads(false)]);
    own.next(false);
    sink!.restore();
    expect(heard, 'the breaker let go while the source itself reads nothing').to.deep.equal([reads(true), reads(false)]);
    own.next(true);
    expect(heard, 'the source reads again').to.deep.equal([reads(true), reads(false), reads(true)]);
  });
});
