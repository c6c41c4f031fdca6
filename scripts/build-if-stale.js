#!/usr/bin/env node
// `npm start`'s pre-step: runs `npm run build:app` only when a source is newer than
// the last build, so starting an unchanged tree does not wait for tsc. It builds
// only what `npm start` runs (src/ and tools/, tsconfig.app.json): the tests and
// benchmarks are built by `npm test` (`npm run build`). It says that it builds,
// and how long that took: a first start on a fresh clone compiles for a while.
// The last build's time is the mtime of dist/src/schema/precompiled/, which the
// build's final step (precompile) recreates on every build.
const { readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');
const { execSync } = require('node:child_process');

const root = join(__dirname, '..');
// what tsconfig.app.json includes, plus what changes how it compiles
const SOURCES = ['src', 'tools', 'tsconfig.json', 'tsconfig.app.json', 'package.json', 'package-lock.json'];

function newestMtime(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0; // absent
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted file shows as its directory changing
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

function builtAt() {
  try {
    return statSync(join(root, 'dist', 'src', 'schema', 'precompiled')).mtimeMs;
  } catch {
    return -1; // never built
  }
}

const sources = Math.max(...SOURCES.map((name) => newestMtime(join(root, name))));
if (sources > builtAt()) {
  const first = builtAt() < 0;
  process.stderr.write(
    `eddy: building src/ and tools/ (${first ? 'the first start compiles them once' : 'a source changed'}; npm test builds the tests) ...\n`,
  );
  const started = Date.now();
  execSync('npm run build:app --silent', { cwd: root, stdio: 'inherit' });
  process.stderr.write(`eddy: built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
