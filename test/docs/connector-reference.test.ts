import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OfframpType, OnrampType } from '../../src/connectors/connector';
import {
  END_MARKER,
  START_MARKER,
  betweenMarkers,
  configRows,
  renderConnectorReference,
  replaceBetweenMarkers,
  repoRoot,
} from '../../src/docs/connector-reference';
import { Registries } from '../../src/runtime/registries';

const ROOT = repoRoot(__dirname);

describe('connector reference', () => {
  describe('README.md', () => {
    it('holds, between its markers, exactly what the connector reference renders', () => {
      const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
      const current = betweenMarkers(readme);
      const rendered = renderConnectorReference(Registries.withBuiltins());
      if (current !== rendered) {
        const a = current.split('\n');
        const b = rendered.split('\n');
        const line = a.findIndex((l, i) => l !== b[i]);
        const at = line < 0 ? Math.min(a.length, b.length) : line;
        expect.fail(
          `README.md's connector reference is out of date: run \`npm run docs\` and commit README.md.\n` +
            `First difference at line ${at + 1} of the section:\n  README:   ${JSON.stringify(a[at] ?? '<end>')}\n  rendered: ${JSON.stringify(b[at] ?? '<end>')}`,
        );
      }
    });

    it('has prose in docs/connectors/<type>.md for every builtin onramp and offramp type', () => {
      const registries = Registries.withBuiltins();
      const names = [...new Set([...registries.onramps.names(), ...registries.offramps.names()])];
      const missing = names.filter((name) => !existsSync(join(ROOT, 'docs', 'connectors', `${name}.md`)));
      expect(missing, 'types without docs/connectors/<type>.md').to.deep.equal([]);
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

    it('renders each type once, sorted, with both sides, the escaped table, the example as YAML, and linked where required', () => {
      const text = renderConnectorReference(registries(), { docsDir: dir });
      const headings = text.split('\n').filter((l) => l.startsWith('#'));
      expect(headings).to.deep.equal(['### alpha', '#### alpha offramp', '### zeta', '#### zeta onramp', '#### zeta offramp']);
      expect(text).to.contain('| [zeta](#zeta) | yes | yes |');
      expect(text).to.contain('Default codec: `string`. Linkable: yes.');
      expect(text).to.contain('Linkable: only linked (`linked: true` is required).');
      expect(text).to.contain('| `endpoint.port` | integer (≥ 1) | `80` | no | port \\| number |');
      expect(text).to.contain('| `entries[].name` | string |  | yes | symbolic name |');
      expect(text).to.contain('```yaml\nonramp:\n  - id: zeta\n    type: zeta\n    config:\n      endpoint: http://x/\n      entries:\n        - name: a\n```');
      expect(text).to.contain('```yaml\nofframp:\n  - id: zeta\n    type: zeta\n    linked: true\n    config: {}\n```');
      expect(text).to.contain('No config.');
      expect(text).not.to.contain('#### Behaviour');
    });

    it('adds the prose of docs/connectors/<type>.md: its title dropped, its headings below the type, code blocks untouched', () => {
      writeFileSync(join(dir, 'zeta.md'), '# zeta\n\nIntro.\r\n\n## Onramp\n\nText.\n\n```yaml\n# a comment, not a heading\n```\n\n### Linked\n\nMore.\n');
      const text = renderConnectorReference(registries(), { docsDir: dir });
      const prose = text.slice(text.indexOf('#### Behaviour'));
      expect(prose).to.equal('#### Behaviour\n\nIntro.\n\n##### Onramp\n\nText.\n\n```yaml\n# a comment, not a heading\n```\n\n###### Linked\n\nMore.\n');
    });

    it('finds the repository root from the compiled module, so docs/connectors/ is read from there', () => {
      expect(existsSync(join(repoRoot(), 'package.json'))).to.equal(true);
      expect(repoRoot()).to.equal(ROOT);
      expect(renderConnectorReference(Registries.withBuiltins())).to.contain(readFileSync(join(ROOT, 'docs', 'connectors', 'metronome.md'), 'utf8').split('\n')[2]);
    });
  });

  describe('markers', () => {
    it('replaces what is between the markers, and nothing else; replacing again changes nothing', () => {
      const text = `# x\n\n${START_MARKER}\nold\n${END_MARKER}\n\n## after\n`;
      const once = replaceBetweenMarkers(text, 'new\n');
      expect(once).to.equal(`# x\n\n${START_MARKER}\nnew\n${END_MARKER}\n\n## after\n`);
      expect(betweenMarkers(once)).to.equal('new\n');
      expect(replaceBetweenMarkers(once, 'new\n')).to.equal(once);
    });

    it('refuses a text without both markers, or with one twice', () => {
      expect(() => replaceBetweenMarkers('no markers', 'x')).to.throw(/must contain/);
      expect(() => replaceBetweenMarkers(`${START_MARKER}\n${END_MARKER}\n${END_MARKER}`, 'x')).to.throw(/once each/);
      expect(() => replaceBetweenMarkers(`${END_MARKER}\n${START_MARKER}`, 'x')).to.throw(/must contain/);
    });
  });
});
