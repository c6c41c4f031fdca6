import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { Registries } from '../../src/runtime/registries';
import { ROOT } from '../helpers/readme';

/**
 * What a type is, the type says (issue 38): its path fields, whether it can
 * stop the process, its ports. The runtime and the API know no type by
 * name, so a new type needs no line there and a rule about one type cannot
 * hide there. This reads every string literal of src/runtime/ and src/api/
 * and fails on one that is a connector or operator type's name, the names
 * taken from the builtin catalogs.
 */

/** The folders that must name no type. */
const SCANNED = ['src/runtime', 'src/api'];

/**
 * Methods whose first argument names an event of an emitter (a worker's
 * `'exit'`), not a type: the one place a type's word may be written with
 * another meaning.
 */
const EVENT_METHODS = new Set(['on', 'once', 'off', 'emit', 'addListener', 'removeListener', 'removeAllListeners', 'listenerCount']);

/** Every connector and operator type name of the builtin catalogs. */
function typeNames(): Set<string> {
  const registries = Registries.withBuiltins();
  return new Set([...registries.onramps.names(), ...registries.offramps.names(), ...registries.operators.names()]);
}

/** The string literals of `text` that are one of `names`, as `line: 'name'`, but for event names. */
export function typeNamesIn(text: string, names: ReadonlySet<string>): string[] {
  const source = ts.createSourceFile('scanned.ts', text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const isEventName = (node: ts.Node) =>
    ts.isCallExpression(node.parent) &&
    node.parent.arguments[0] === node &&
    ts.isPropertyAccessExpression(node.parent.expression) &&
    EVENT_METHODS.has(node.parent.expression.name.text);
  const visit = (node: ts.Node): void => {
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && names.has(node.text) && !isEventName(node)) {
      found.push(`${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: '${node.text}'`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

describe('no type name in the runtime or the API (each type knows itself)', () => {
  const names = typeNames();

  it('takes the names from the catalogs: connectors and operators', () => {
    for (const name of ['file', 'exit', 'stdout', 'kafka', 'passthrough', 'qos::wal', 'window::aggregate']) expect(names.has(name), name).to.equal(true);
  });

  it('finds a type name written as a string, and not an emitter event of the same word', () => {
    const text = [
      "if (ramp.type === 'exit') stop();",
      'const type = `qos::wal`;',
      "worker.on('exit', (code) => lost(code));",
      'const described = `the ${kind} exit`;',
    ].join('\n');
    expect(typeNamesIn(text, names)).to.deep.equal(["1: 'exit'", "2: 'qos::wal'"]);
  });

  it('src/runtime/ and src/api/ name no connector or operator type', () => {
    const found = SCANNED.flatMap((dir) =>
      [...sources(join(ROOT, dir))].flatMap((path) => typeNamesIn(readFileSync(path, 'utf8'), names).map((hit) => `${relative(ROOT, path)}:${hit}`)),
    );
    expect(found, 'say it on the type (its schema, its definition) and have the runtime ask the registries').to.deep.equal([]);
  });
});
