import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OfframpType, OnrampType } from '../../src/connectors/connector';
import { CONNECTOR_DOCS_DIR, GENERATED_END, GENERATED_START, configRows, renderConnectorPages, repoRoot, stalePages, writePages } from '../../tools/docs/connector-reference';
import { Registries } from '../../src/runtime/registries';

const ROOT = repoRoot(__dirname);

describe('connector reference', () => {
  describe(CONNECTOR_DOCS_DIR, () => {
    it("holds each type's page with its configuration as the types render it, and the index (run `npm run docs` after changing a type)", () => {
      const pages = renderConnectorPages(Registries.withBuiltins());
      const stale = stalePages(join(ROOT, CONNECTOR_DOCS_DIR), pages);
      if (stale.length > 0) {
        const file = stale[0];
        const path = join(ROOT, CONNECTOR_DOCS_DIR, file);
        const a = existsSync(path) ? readFileSync(path, 'utf8').split('\n') : [];
        const b = (pages.get(file) ?? '').split('\n');
        const line = a.findIndex((l, i) => l !== b[i]);
        const at = line < 0 ? Math.min(a.length, b.length) : line;
        expect.fail(
          `the connector pages are out of date (${stale.join(', ')}): run \`npm run docs\` and commit ${CONNECTOR_DOCS_DIR}.\n` +
            `First difference in ${file} at line ${at + 1}:\n  file:     ${JSON.stringify(a[at] ?? '<end>')}\n  rendered: ${JSON.stringify(b[at] ?? '<end>')}`,
        );
      }
    });

    it('keeps each connector\'s prose once: no second copy of the pages elsewhere in docs/', () => {
      expect(existsSync(join(ROOT, 'docs', 'reference', 'connectors')), 'docs/reference/connectors/ is gone').to.equal(false);
    });
  });

  describe('rendering', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-docs-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    const schema = {
      type: 'object',
      additionalProperties: false,
      required: ['endpoint', 'entries'],
      properties: {
        endpoint: {
          description: 'where to send',
          oneOf: [
            { type: 'string' },
            {
              type: 'object',
              additionalProperties: false,
              required: ['host'],
              properties: { host: { type: 'string', description: 'host name' }, port: { type: 'integer', minimum: 1, default: 80, description: 'port | number' } },
            },
          ],
        },
        entries: {
          type: 'array',
          description: 'the schedule',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['name'],
            properties: { name: { type: 'string', description: 'symbolic\nname' }, payload: { type: 'object', description: 'any JSON object' } },
          },
        },
        headers: { type: 'object', additionalProperties: { type: 'string' }, default: {}, description: 'extra headers' },
        method: { enum: ['GET', 'POST'], default: 'POST', description: 'HTTP method' },
        hosts: { type: 'array', items: { type: 'string' }, description: 'host list' },
      },
    };

    it('makes one row per property, nested fields under their parent, with type, default and required', () => {
      expect(configRows(schema)).to.deep.equal([
        { field: 'endpoint', type: 'string or object', default: undefined, required: true, description: 'where to send' },
        { field: 'endpoint.host', type: 'string', default: undefined, required: true, description: 'host name' },
        { field: 'endpoint.port', type: 'integer (≥ 1)', default: '80', required: false, description: 'port | number' },
        { field: 'entries', type: 'list of object', default: undefined, required: true, description: 'the schedule' },
        { field: 'entries[].name', type: 'string', default: undefined, required: true, description: 'symbolic\nname' },
        { field: 'entries[].payload', type: 'object', default: undefined, required: false, description: 'any JSON object' },
        { field: 'headers', type: 'map of string to string', default: '{}', required: false, description: 'extra headers' },
        { field: 'method', type: 'one of "GET", "POST"', default: '"POST"', required: false, description: 'HTTP method' },
        { field: 'hosts', type: 'list of string', default: undefined, required: false, description: 'host list' },
      ]);
    });

    function registries(): Registries {
      const r = new Registries();
      const onramp: OnrampType = { name: 'zeta', defaultCodec: 'string', configSchema: schema, example: { endpoint: 'http://x/', entries: [{ name: 'a' }] }, linkable: true, create: () => ({ frames: undefined as never }) };
      const offramp: OfframpType = { name: 'zeta', defaultCodec: 'json', configSchema: { type: 'object', additionalProperties: false, properties: {} }, example: {}, autoAck: true, linkable: 'required', create: () => ({ send: () => undefined }) };
      const other: OfframpType = { name: 'alpha', defaultCodec: 'json', configSchema: { type: 'object', additionalProperties: false, properties: {} }, autoAck: true, create: () => ({ send: () => undefined }) };
      r.onramps.register('zeta', onramp);
      r.offramps.register('zeta', offramp);
      r.offramps.register('alpha', other);
      return r;
    }

    it('fills the end of each page with its configuration: sorted in the index, both sides, the escaped table, the example as YAML, linked where required', () => {
      writeFileSync(join(dir, 'alpha.md'), '# alpha\n\nWrites nowhere.\n');
      writeFileSync(join(dir, 'zeta.md'), '# zeta\n\n## Onramp\n\nReads.\n');
      const pages = renderConnectorPages(registries(), dir);
      expect([...pages.keys()]).to.deep.equal(['README.md', 'alpha.md', 'zeta.md']);
      const headings = (file: string) => pages.get(file)!.split('\n').filter((l) => l.startsWith('#'));
      expect(headings('alpha.md')).to.deep.equal(['# alpha', '## Configuration', '### Offramp']);
      expect(headings('zeta.md')).to.deep.equal(['# zeta', '## Onramp', '## Configuration', '### Onramp', '### Offramp']);
      expect(pages.get('zeta.md')!.startsWith('# zeta\n\n## Onramp\n\nReads.\n\n' + GENERATED_START)).to.equal(true);
      expect(pages.get('README.md')).to.contain('| [alpha](alpha.md) |  | yes |');
      expect(pages.get('README.md')).to.contain('| [zeta](zeta.md) | yes | yes |');
      const text = pages.get('zeta.md')! + pages.get('alpha.md')!;
      expect(text).to.contain('Default codec: `string`. Linkable: yes.');
      expect(text).to.contain('Linkable: only linked (`linked: true` is required).');
      expect(text).to.contain('| `endpoint.port` | integer (≥ 1) | `80` | no | port \\| number |');
      expect(text).to.contain('| `entries[].name` | string |  | yes | symbolic name |');
      expect(text).to.contain('```yaml\nonramp:\n  - id: zeta\n    type: zeta\n    config:\n      endpoint: http://x/\n      entries:\n        - name: a\n```');
      expect(text).to.contain('```yaml\nofframp:\n  - id: zeta\n    type: zeta\n    linked: true\n    config: {}\n```');
      expect(text).to.contain('No config.');
    });

    it('rewrites only the generated part: the prose around it stays as written, and a second run changes nothing', () => {
      writeFileSync(join(dir, 'alpha.md'), `# alpha\n\nBefore.\n\n${GENERATED_START}\nstale\n${GENERATED_END}\n\nAfter.\n`);
      writeFileSync(join(dir, 'zeta.md'), '# zeta\n');
      const pages = renderConnectorPages(registries(), dir);
      const alpha = pages.get('alpha.md')!;
      expect(alpha.startsWith('# alpha\n\nBefore.\n\n' + GENERATED_START)).to.equal(true);
      expect(alpha.endsWith(GENERATED_END + '\n\nAfter.\n')).to.equal(true);
      expect(alpha).not.to.contain('stale');
      writePages(dir, pages);
      expect(stalePages(dir, renderConnectorPages(registries(), dir))).to.deep.equal([]);
    });

    it('refuses a type without a page, naming the file to write', () => {
      writeFileSync(join(dir, 'alpha.md'), '# alpha\n');
      expect(() => renderConnectorPages(registries(), dir)).to.throw(/zeta\.md: the zeta connector has no page/);
    });

    it('finds the repository root from the compiled module, so docs/connectors/ is read from there', () => {
      expect(existsSync(join(repoRoot(), 'package.json'))).to.equal(true);
      expect(repoRoot()).to.equal(ROOT);
      expect(renderConnectorPages(Registries.withBuiltins()).get('metronome.md')).to.contain(readFileSync(join(ROOT, 'docs', 'connectors', 'metronome.md'), 'utf8').split('\n')[2]);
    });
  });

  describe('writing', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eddy-docs-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('writes missing and changed pages, and then finds nothing stale', () => {
      writeFileSync(join(dir, 'a.md'), 'old\n');
      const pages = new Map([['a.md', 'new\n'], ['b.md', 'b\n']]);
      expect(stalePages(dir, pages)).to.deep.equal(['a.md', 'b.md']);
      expect(writePages(dir, pages)).to.deep.equal(['a.md', 'b.md']);
      expect(readFileSync(join(dir, 'a.md'), 'utf8')).to.equal('new\n');
      expect(stalePages(dir, pages)).to.deep.equal([]);
    });
  });
});
