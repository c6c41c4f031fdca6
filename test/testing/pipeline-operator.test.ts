import { expect } from 'chai';
import { Subject, firstValueFrom, from, lastValueFrom, map, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { batchValues, event, isEvent, type Insight } from '../../src/core/event';
import { pipelineOperator, pipelinePorts } from '../../src/embed/pipeline-operator';
import { Runtime } from '../../src/runtime/runtime';
import { createLogger } from '../../src/core/logger';

const ROUTER = `
id: router
interface: { inputs: [in], outputs: [out, err] }
nodes:
  - id: check
    type: runtime::cel
    config: { filter: "event.n > 1" }
links: { in: [check], check: [out], check/err: [err] }
`;

describe('a pipeline as an RxJS operator', () => {
  it('wraps plain values as events and emits the out port', async () => {
    const out = await lastValueFrom(from([{ n: 1 }, { n: 2 }, { n: 3 }]).pipe(pipelineOperator(ROUTER), toArray()));
    expect(out.every(isEvent)).to.equal(true);
    expect(out.map((e) => e.data)).to.deep.equal([{ n: 2 }, { n: 3 }]);
  });

  it('pipelinePorts reaches err and tags every event with its port', async () => {
    const tagged = await lastValueFrom(from([{ n: 2 }, 'not a record']).pipe(pipelinePorts(ROUTER), toArray()));
    expect(tagged.map((pe) => [pe.port, pe.event.data])).to.deep.equal([
      ['out', { n: 2 }],
      ['err', 'not a record'],
    ]);
  });

  it('passes events through with their id and meta', async () => {
    const input = event({ n: 5 }, { source: 'app' });
    const [out] = await lastValueFrom(from([input]).pipe(pipelineOperator(ROUTER), toArray()));
    expect(out.id).to.deep.equal(input.id);
    expect(out.meta).to.deep.equal({ source: 'app' });
  });

  it('drains on completion: a partial batch leaves, then the result completes', async () => {
    const batch = {
      id: 'b',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'b', type: 'generic::batch', config: { count: 10 } }],
      links: { in: ['b'], b: ['out'] },
    };
    const out = await lastValueFrom(from([1, 2]).pipe(pipelineOperator(batch), toArray()));
    expect(out).to.have.length(1);
    expect(out[0].isBatch).to.equal(true);
  });

  it("runs window::aggregate in an application's RxJS chain: grouped counts, the open window flushed when the source completes", async () => {
    const perApp = {
      id: 'per_app',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [
        {
          id: 'w',
          type: 'window::aggregate',
          config: { window: { count: 2 }, group_by: { app: 'event.app' }, aggregate: { n: 'count()', ms: 'sum(event.ms)' } },
        },
      ],
      links: { in: ['w'], w: ['out'] },
    };
    const input = [
      { app: 'a', ms: 1 },
      { app: 'b', ms: 2 },
      { app: 'a', ms: 3 },
    ];
    const out = await lastValueFrom(from(input).pipe(pipelineOperator(perApp), toArray()));
    expect(out.map((e) => [e.data, e.meta.partial ?? false])).to.deep.equal([
      [{ app: 'a', n: 2, ms: 4 }, false],
      [{ app: 'b', n: 1, ms: 2 }, true],
    ]);
  });

  it('runs time-based operators on the scheduler it is given', () => {
    const scheduler = new TestScheduler((a, e) => {
      expect(a).to.deep.equal(e);
    });
    const batch = {
      id: 'b',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'b', type: 'generic::batch', config: { count: 10, timeout: 5000 } }],
      links: { in: ['b'], b: ['out'] },
    };
    scheduler.run(({ cold, expectObservable }) => {
      const batches = cold('a 9s b|', { a: 1, b: 2 }).pipe(
        pipelineOperator(batch, { scheduler }),
        map((e) => batchValues(e.data)),
      );
      // the timeout flushes [1] at 5 s; completion at 9.002 s drains [2]
      expectObservable(batches).toBe('5000ms x 4001ms (y|)', { x: [1], y: [2] });
    });
  });

  it('reports insights raised by its operators (a WAL acks what it stored)', async () => {
    const insights: Insight[] = [];
    const wal = {
      id: 'w',
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'w', type: 'qos::wal', config: { read_count: 10, max_elements: 10 } }],
      links: { in: ['w'], w: ['out'] },
    };
    const input = new Subject<unknown>();
    const first = firstValueFrom(input.pipe(pipelineOperator(wal, { onInsight: (i) => insights.push(i) })));
    input.next(event('hi', {}, { transactional: true }));
    expect((await first).data).to.equal('hi');
    expect(insights.map((i) => i.kind)).to.deep.equal(['ack']);
    input.complete();
  });

  it('an invalid artefact or an unknown port throws at once, naming it', () => {
    expect(() => pipelineOperator({ id: 'x', interface: {}, nodes: [{ id: 'n', type: 'nope' }], links: {} })).to.throw(
      "pipeline 'x': nodes[0].type: unknown operator 'nope'",
    );
    expect(() => pipelineOperator(ROUTER, { output: 'overflow' })).to.throw("pipeline 'router' has no output port 'overflow' (outputs: out, err)");
  });

  it('a pipeline given as YAML text with a syntax error throws showing the line and a caret', () => {
    expect(() => pipelineOperator('id: x\ninterface: inputs: [in]\n')).to.throw(
      [
        'pipeline: not valid YAML or JSON: Nested mappings are not allowed in compact mappings at line 2, column 12:',
        '  1 | id: x',
        '  2 | interface: inputs: [in]',
        '    |            ^',
      ].join('\n'),
    );
  });
});

describe('a Runtime on a virtual clock', () => {
  it('runs its pipelines and connectors on the scheduler it is given', async () => {
    const scheduler = new TestScheduler((a, e) => {
      expect(a).to.deep.equal(e);
    });
    const runtime = await new Runtime({ scheduler, logger: createLogger('silent') }).start();
    try {
      runtime.publish('onramp', { id: 'tick', type: 'metronome', config: { interval: 60_000 } });
      runtime.publish('pipeline', {
        id: 'hourly',
        interface: { inputs: ['in'], outputs: ['out'] },
        nodes: [{ id: 'b', type: 'generic::batch', config: { count: 1000, timeout: 3_590_000 } }],
        links: { in: ['b'], b: ['out'] },
      });
      runtime.publish('binding', { id: 'clock', links: { '/onramp/tick/{instance}/out': ['/pipeline/hourly/{instance}/in'] } });
      await runtime.activate('binding', 'clock', 'one', { instance: 'one' });
      const batches: unknown[][] = [];
      runtime
        .pipeline('/pipeline/hourly/one')!
        .output('out')
        .subscribe((e) => batches.push(e.data as unknown[]));
      // two hours of virtual time: a tick a minute from 60 s on; the first batch closes 3,590 s after its first tick
      scheduler.maxFrames = 2 * 3_600_000;
      scheduler.flush();
      expect(batches.map((b) => b.length)).to.deep.equal([60]);
    } finally {
      await runtime.shutdown();
    }
  });
});
