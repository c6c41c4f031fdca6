import { expect } from 'chai';
import { eventually } from '../../helpers/runtime';
import { documentsIn, sorted, startElasticFlow, useElastic, type ElasticFlow } from './helpers';

describe('elastic offramp (linked) against a real Elasticsearch', function () {
  this.timeout(30_000);
  const elastic = useElastic();
  let flow: ElasticFlow | undefined;
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
  });

  it('a mixed bulk: a success on out and a failure on err per item, with the exact shapes, and the event fails', async () => {
    const idx = elastic.index('mixed');
    // a strict mapping: a document with a field it does not know is rejected by the cluster
    await elastic.client.indices.create({ index: idx, mappings: { dynamic: 'strict', properties: { n: { type: 'integer' }, name: { type: 'keyword' } } } });
    flow = await startElasticFlow({
      offramp: { linked: true, config: { nodes: elastic.nodes() } },
      nodes: [{ id: 'batch', type: 'generic::batch', config: { count: 3 } }],
    });
    flow.feed.push({ n: 1, name: 'one' }, { index: idx, doc_id: 'a', correlation: 'c1' });
    flow.feed.push({ n: 2, surprise: 'x' }, { index: idx, doc_id: 'b', correlation: 'c2' });
    flow.feed.push({ n: 3 }, { index: idx, correlation: 'c3' });
    await eventually(() => flow!.out.length === 2 && flow!.err.length === 1, 20_000, 'two successes and one failure');
    await eventually(() => flow!.feed.fails.length === 3, 20_000, 'the batch failed');

    const [first, third] = flow.out;
    const [second] = flow.err;
    const source = (first.data as { source: { event_id: string } }).source;
    expect(source.event_id, 'the batch event id').to.match(/^\d+:\d+$/);
    const generatedId = (third.meta.elastic as { id: unknown }).id;
    expect(generatedId, 'an id the cluster made').to.be.a('string').and.not.equal('');

    expect(first.data).to.deep.equal({ success: true, source: { event_id: source.event_id, origin: 'svc-feed://test' }, payload: { n: 1, name: 'one' } });
    expect(Object.keys(first.data as object)).to.deep.equal(['success', 'source', 'payload']);
    expect(first.meta).to.deep.equal({ elastic: { id: 'a', type: null, index: idx, version: 1 }, correlation: 'c1' });

    expect(third.data).to.deep.equal({ success: true, source: { event_id: source.event_id, origin: 'svc-feed://test' }, payload: { n: 3 } });
    expect(third.meta).to.deep.equal({ elastic: { id: generatedId, type: null, index: idx, version: 1 }, correlation: 'c3' });

    const error = (second.data as { error: { type: string; reason: string } }).error;
    expect(error.type).to.equal('strict_dynamic_mapping_exception');
    expect(error.reason).to.contain('surprise');
    expect(second.data).to.deep.equal({
      success: false,
      source: { event_id: source.event_id, origin: 'svc-feed://test' },
      error,
      payload: { n: 2, surprise: 'x' },
    });
    expect(Object.keys(second.data as object)).to.deep.equal(['success', 'source', 'error', 'payload']);
    expect(second.meta).to.deep.equal({ elastic: { id: 'b', type: null, index: idx }, correlation: 'c2' });

    // a partially failed bulk fails the whole event: every member is failed back, none acked
    expect(sorted(flow.feed.fails)).to.deep.equal([1, 2, 3]);
    expect(flow.feed.acks).to.deep.equal([]);
    expect((await documentsIn(elastic.client, idx)).map((d) => d._source)).to.have.deep.members([{ n: 1, name: 'one' }, { n: 3 }]);
  });

  it('a plain event: its success on out carries the version the cluster gave it, and the event is acked', async () => {
    const idx = elastic.index('versions');
    flow = await startElasticFlow({ offramp: { linked: true, config: { nodes: elastic.nodes() } } });
    flow.feed.push({ v: 1 }, { index: idx, doc_id: 'same' });
    await eventually(() => flow!.out.length === 1, 20_000, 'the first success');
    flow.feed.push({ v: 2 }, { index: idx, doc_id: 'same' });
    await eventually(() => flow!.out.length === 2 && flow!.feed.acks.length === 2, 20_000, 'the second success and both acks');
    expect(flow.out.map((e) => (e.meta.elastic as { version: number }).version)).to.deep.equal([1, 2]);
    expect(flow.out.map((e) => e.meta.correlation)).to.deep.equal([undefined, undefined]);
    // source.event_id: the event's own id, uid:seq of the feed onramp
    const [firstId, secondId] = flow.out.map((e) => (e.data as { source: { event_id: string } }).source.event_id);
    const uid = /^(\d+):1$/.exec(firstId)?.[1];
    expect(uid, firstId).to.be.a('string');
    expect(flow.out[1].data).to.deep.equal({ success: true, source: { event_id: `${uid}:2`, origin: 'svc-feed://test' }, payload: { v: 2 } });
    expect(secondId).to.equal(`${uid}:2`);
    expect(flow.err).to.deep.equal([]);
  });

  it('a malformed event goes to err, one reply per document, with the reason; nothing of it is sent', async () => {
    const idx = elastic.index('malformed');
    flow = await startElasticFlow({
      offramp: { linked: true, config: { nodes: elastic.nodes() } },
      nodes: [{ id: 'batch', type: 'generic::batch', config: { count: 2 } }],
    });
    flow.feed.push({ fine: true }, { index: idx, correlation: 1 });
    flow.feed.push({ homeless: true }, { doc_id: 'h', correlation: 2 });
    await eventually(() => flow!.err.length === 2 && flow!.feed.fails.length === 2, 20_000, 'two err replies and the fail');
    const reason = 'batch member 1: $index is required: the name of the index (a string)';
    expect(flow.err.map((e) => e.data)).to.deep.equal([
      { success: false, source: (flow.err[0].data as { source: unknown }).source, error: { type: 'malformed_event', reason }, payload: { fine: true } },
      { success: false, source: (flow.err[0].data as { source: unknown }).source, error: { type: 'malformed_event', reason }, payload: { homeless: true } },
    ]);
    expect(flow.err.map((e) => e.meta)).to.deep.equal([
      { elastic: { id: null, type: null, index: idx }, correlation: 1 },
      { elastic: { id: null, type: null, index: null }, correlation: 2 },
    ]);
    expect(flow.out).to.deep.equal([]);
    expect(await elastic.client.indices.exists({ index: idx }), 'nothing was sent').to.equal(false);
  });

  it('a bulk the cluster refuses whole: every document on err with the cluster error object', async () => {
    const idx = elastic.index('refused');
    flow = await startElasticFlow({ offramp: { linked: true, config: { nodes: elastic.nodes() } } });
    flow.feed.push({ t: 1 }, { index: idx, doc_type: 'legacy', doc_id: 'z', correlation: 'x' });
    await eventually(() => flow!.err.length === 1 && flow!.feed.fails.length === 1, 20_000, 'the err reply and the fail');
    const [failure] = flow.err;
    const error = (failure.data as { error: { type: string; reason: string } }).error;
    expect(error.type).to.equal('illegal_argument_exception');
    expect(error.reason).to.contain('_type');
    expect(failure.meta).to.deep.equal({ elastic: { id: 'z', type: 'legacy', index: idx }, correlation: 'x' });
  });
});
