import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../tools/docs/connector-reference';
import { OPERATORS_README, portsCell, renderOperatorsReadme } from '../../tools/docs/operator-ports';
import { Registries } from '../../src/runtime/registries';

describe('operators README: the ports, generated from the types', () => {
  const registries = Registries.withBuiltins();

  it('is what the types render (run `npm run docs` after changing a type’s ports or examples)', () => {
    const current = readFileSync(join(repoRoot(__dirname), OPERATORS_README), 'utf8');
    expect(renderOperatorsReadme(current, registries)).to.equal(current);
  });

  it('lists the ports of each example, a variant named by what it changes', () => {
    expect(portsCell(registries.operators.get('enrich::lookup'))).to.equal('`out`, `err`; with `on_miss: port`: `out`, `miss`, `err`');
    expect(portsCell(registries.operators.get('runtime::cel'))).to.equal('`out`, `err`; with `route: event.level == "error" ? "alerts" : "out"`: `out`, `err`, `alerts`');
  });

  it('refuses a table without a row for a type, or with a row for no type', () => {
    const table = (...rows: string[]) => ['| Type | Ports | Notes |', '|---|---|---|', ...rows].join('\n');
    expect(() => renderOperatorsReadme(table('| `passthrough` | `out` |  |'), registries)).to.throw('no row for ');
    expect(() => renderOperatorsReadme(table('| `no::such` | `out` |  |'), registries)).to.throw("a row for 'no::such', which is no operator type");
  });
});
