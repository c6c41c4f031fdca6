import { expect } from 'chai';
import fc from 'fast-check';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { jsonTooDeep, yamlTooDeep } from '../../src/api/depth';
import { measure } from '../../src/api/yaml-worker';

/** The depth a scanner sees: the smallest limit it lets the text through at. */
function scannedDepth(scan: (text: string, max: number) => unknown, text: string): number {
  let max = 0;
  while (scan(text, max) !== undefined) max++;
  return max;
}

function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

describe('body depth pre-scan', () => {
  it('measures JSON exactly, skipping brackets inside strings and escapes', () => {
    expect(scannedDepth(jsonTooDeep, '1')).to.equal(0);
    expect(scannedDepth(jsonTooDeep, '{"a": [1, {"b": []}]}')).to.equal(4);
    expect(scannedDepth(jsonTooDeep, '{"[[[[": "]]]]{{{{", "q\\"[[[": 1}')).to.equal(1);
    expect(scannedDepth(jsonTooDeep, '[[],[],[[]]]')).to.equal(3);
    expect(jsonTooDeep('{\n  "a": {\n    "b": [1]\n  }\n}', 2)).to.deep.equal({ line: 3, column: 10 });
  });

  const yamlCases: [string, string, number][] = [
    ['a scalar', 'hello', 0],
    ['a block map', 'a: 1\nb: 2\n', 1],
    ['nested block maps', 'a:\n  b:\n    c: 1\n  d: 2\ne: 3\n', 3],
    ['a sequence under a key at the same indent', 'a:\n- 1\n- b:\n  - 2\nc: 3\n', 4],
    ['compact sequences', '- - - x\n  - y\n', 3],
    ['a map in a sequence entry', '- a: 1\n  b:\n    c: 2\n', 3],
    ['flow in block', 'a: [1, {b: [2]}]\nc: {d: e}\n', 4],
    ['a flow collection over several lines', 'a: [\n  [1,\n   [2]],\n  3]\n', 4],
    ['brackets in quoted scalars, comments and plain scalars', `a: "[[[["\nb: '{{{{' # [[[[\nc: x[0]{1}\nd: [it's, "q\\"[", 'it''s [[']\n`, 2],
    ['brackets in a block scalar', 'a: |\n  [[[[[[\n  {{{{{{\nb: >-\n  - - - -\n', 1],
    ['structure right after a block scalar', '- |\n  text\n- - [x]\n', 3],
    ['anchors, tags and aliases', 'a: &x !!seq [1, [2]]\nb: *x\nc: !tag {d: 1}\n', 3],
    ['an explicit key', '? a\n: [b, [c]]\n', 3],
    ['documents and comments', '# [[[[\n--- # c\na: [1]\n...\n', 2],
    ['JSON as YAML', '{"a": {"b": [1, {"c": null}]}}', 4],
  ];
  for (const [what, text, depth] of yamlCases) {
    it(`counts YAML levels: ${what} (${depth})`, () => {
      expect(depthOf(parseYaml(text, { logLevel: 'error' })), 'the test case itself').to.equal(depth);
      expect(scannedDepth(yamlTooDeep, text)).to.equal(depth);
    });
  }

  it('reports the line and column where YAML goes past the limit', () => {
    expect(yamlTooDeep('a:\n  b:\n    c: [1]\n', 2)).to.deep.equal({ line: 3, column: 5 });
    expect(yamlTooDeep('a: [[1]]\n', 2)).to.deep.equal({ line: 1, column: 5 });
    expect(yamlTooDeep('- - - x\n', 2)).to.deep.equal({ line: 1, column: 5 });
    expect(yamlTooDeep('a: [[1]]\n', 3)).to.equal(undefined);
  });

  it('agrees with the yaml library on the depth of what yaml.stringify writes, in block and flow styles (fixed seed)', () => {
    const text = fc.string({
      unit: fc.constantFrom('a', 'b', ' ', ':', '-', '#', '[', ']', '{', '}', ',', '"', "'", '|', '>', '&', '*', '!', '?', '\n'),
      maxLength: 8,
    });
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null)),
        fc.array(tie('node'), { maxLength: 3 }),
        fc.dictionary(text, tie('node'), { maxKeys: 3 }),
      ),
    })).node;
    const styles = [{}, { collectionStyle: 'flow' as const }, { indentSeq: false }, { indent: 4 }, { lineWidth: 20, minContentWidth: 5 }];
    fc.assert(
      fc.property(value, fc.constantFrom(...styles), (v, style) => {
        const written = toYaml(v, style);
        let parsed: unknown;
        try {
          parsed = parseYaml(written, { logLevel: 'error' });
        } catch {
          return; // the yaml library cannot always read back what it wrote: nothing to compare
        }
        expect(scannedDepth(yamlTooDeep, written), written).to.equal(depthOf(parsed));
        expect(scannedDepth(jsonTooDeep, JSON.stringify(v))).to.equal(depthOf(v));
      }),
      { numRuns: 2000, seed: 7 },
    );
  });

  it('measures parsed values exactly: depth through shared parts, cycles, size as JSON', () => {
    const shared = { a: [1] };
    expect(measure({ x: shared, y: shared }, 3, 1000)).to.equal(undefined);
    expect(measure({ x: shared, y: [shared] }, 3, 1000)).to.equal('body: nested deeper than 3 levels once YAML aliases are expanded');
    const cycle: unknown[] = [];
    cycle.push(cycle);
    expect(measure({ c: cycle }, 64, 1000)).to.equal('body: YAML aliases form a cycle (a collection contains itself)');
    expect(measure({ s: 'x'.repeat(90) }, 64, 100)).to.equal(undefined);
    expect(measure([shared, shared, shared, shared, shared, shared, shared, shared, shared, shared], 64, 100)).to.match(
      /^body: the YAML document expands \(through aliases\) to more than 100 bytes as JSON$/,
    );
  });
});
