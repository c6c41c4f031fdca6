import { expect } from 'chai';
import { join } from 'node:path';
import { runEddy } from '../../helpers/cli';
import { call, eventually, startRuntime, type Started } from '../../helpers/runtime';
import { documentsIn, freePort, useElastic } from './helpers';

describe('elastic offramp end to end', function () {
  this.timeout(30_000);
  const elastic = useElastic();

  describe('published over REST', () => {
    let rt: Started | undefined;
    afterEach(async () => {
      await rt?.stop();
      rt = undefined;
    });

    it('a rest onramp -> pipeline (meta index and doc_id) -> elastic offramp: the posted documents are searchable', async () => {
      const idx = elastic.index('e2e');
      rt = await startRuntime();
      const port = await freePort();
      const artefacts: [string, unknown][] = [
        ['onramp', { id: 'web', type: 'rest', config: { host: '127.0.0.1', port } }],
        [
          'pipeline',
          {
            id: 'route',
            interface: { inputs: ['in'], outputs: ['out'] },
            nodes: [{ id: 'route', type: 'runtime::cel', config: { meta: { index: JSON.stringify(idx), doc_id: 'event.sku' } } }],
            links: { in: ['route'], route: ['out'] },
          },
        ],
        ['offramp', { id: 'search', type: 'elastic', config: { nodes: elastic.nodes() } }],
        [
          'binding',
          {
            id: 'shop',
            links: {
              '/onramp/web/{instance}/out': ['/pipeline/route/{instance}/in'],
              '/pipeline/route/{instance}/out': ['/offramp/search/{instance}/in'],
            },
          },
        ],
      ];
      for (const [kind, body] of artefacts) expect((await call(rt.base, 'POST', `/${kind}`, { body })).status, kind).to.equal(201);
      expect((await call(rt.base, 'POST', '/binding/shop/main')).status).to.equal(201);

      for (const [sku, name] of [
        ['k-1', 'kettle'],
        ['t-2', 'toaster'],
        ['m-3', 'mixer'],
      ]) {
        const posted = await fetch(`http://127.0.0.1:${port}/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ sku, name }),
        });
        expect(posted.status).to.equal(202);
      }
      await eventually(
        async () => (await elastic.client.indices.exists({ index: idx })) && (await documentsIn(elastic.client, idx)).length === 3,
        20_000,
        'three documents',
      );
      expect(await documentsIn(elastic.client, idx)).to.deep.equal([
        { _id: 'k-1', _source: { sku: 'k-1', name: 'kettle' } },
        { _id: 'm-3', _source: { sku: 'm-3', name: 'mixer' } },
        { _id: 't-2', _source: { sku: 't-2', name: 'toaster' } },
      ]);
      const found = await elastic.client.search({ index: idx, query: { match: { name: 'toaster' } } });
      expect(found.hits.hits.map((h) => h._id)).to.deep.equal(['t-2']);
    });
  });

  it('examples/elastic.yaml runs: four books indexed and answered on stdout, the fifth rejected on stderr with the cluster error', async () => {
    const root = join(__dirname, '../../../..');
    expect(process.cwd(), 'the example reads a path relative to the repository root').to.equal(root);
    // the example's own fixed index: start from nothing, so the versions are 1
    await elastic.client.indices.delete({ index: 'eddy-example-books', ignore_unavailable: true });
    const run = await runEddy(['server', 'run', '-f', join(root, 'examples/elastic.yaml'), '--no-api'], { timeoutMs: 25_000 });
    expect(run.code, run.stderr).to.equal(0);
    const indexed = run.stdout
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l));
    const version1 = (id: string) => ({ id, type: null, index: 'eddy-example-books', version: 1 });
    expect(indexed).to.deep.equal([
      { success: true, elastic: version1('978-0141439518'), title: 'Pride and Prejudice' },
      { success: true, elastic: version1('978-0141441146'), title: 'Jane Eyre' },
      { success: true, elastic: version1('978-0141439556'), title: 'Wuthering Heights' },
      { success: true, elastic: version1('978-0141439600'), title: 'A Tale of Two Cities' },
    ]);
    const rejected = run.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(rejected).to.have.length(1);
    expect(rejected[0]).to.include({ success: false, title: 'The Book of Sand' });
    expect(rejected[0].elastic).to.deep.equal({ id: '978-0000000000', type: null, index: 'eddy-example-books' });
    expect(rejected[0].error.type).to.equal('document_parsing_exception');
    const docs = await documentsIn(elastic.client, 'eddy-example-books');
    expect(docs.map((d) => d._id)).to.deep.equal(['978-0141439518', '978-0141439556', '978-0141439600', '978-0141441146']);
    await elastic.client.indices.delete({ index: 'eddy-example-books', ignore_unavailable: true });
  });
});
