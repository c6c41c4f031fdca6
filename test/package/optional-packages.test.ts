import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { OPTIONAL_PACKAGES } from '../../src/core/packages';
import { ROOT } from '../helpers/readme';

interface PackageJson {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;
const OPTIONAL = new Set(Object.keys(OPTIONAL_PACKAGES));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `@platformatic/kafka/dist/x` and `pg/lib/y` belong to `@platformatic/kafka` and `pg`. */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** Each place in `file` that loads an optional package as a value, outside `requirePackage`: "file:line specifier". */
function valueLoads(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node, specifier: string) => {
    if (!OPTIONAL.has(packageOf(specifier))) return;
    const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    found.push(`${relative(ROOT, file)}:${line} ${specifier}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.phaseModifier === ts.SyntaxKind.TypeKeyword ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) report(node, node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      report(node, node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteral(node.arguments[0])) {
      const callee = node.expression;
      const loads = callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require');
      if (loads) report(node, node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('optional packages (docs/install.md)', () => {
  it("are package.json's optional peer dependencies, at core/packages.ts's ranges, and development dependencies", () => {
    expect(pkg.peerDependencies).to.deep.equal(OPTIONAL_PACKAGES);
    for (const name of OPTIONAL) {
      expect(pkg.peerDependenciesMeta[name], name).to.deep.equal({ optional: true });
      expect(pkg.devDependencies[name], `${name} in devDependencies (a clone has every connector)`).to.equal(pkg.peerDependencies[name]);
      expect(pkg.dependencies, name).not.to.have.property(name);
    }
  });

  it('are loaded only through requirePackage: no module of src imports or requires one as a value', () => {
    // a value import would load the package with its module, and its absence would be a crash, not a 400
    expect(sourceFiles(join(ROOT, 'src')).flatMap(valueLoads)).to.deep.equal([]);
  });
});
