#!/usr/bin/env node
// `npm start`'s pre-step: runs `npm run build` only when a source is newer than
// the last build, so starting an unchanged tree does not wait for tsc.
// The last build's time is the mtime of dist/src/schema/precompiled/, which the
// build's final step (precompile) recreates on every build.
const { readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');
const { execSync } = require('node:child_process');

const root = join(__dirname, '..');
// what tsconfig.json includes, plus what changes how it compiles
const SOURCES = ['src', 'tools', 'test', 'marble-tests', 'bench', 'examples', 'tsconfig.json', 'package.json', 'package-lock.json'];

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
if (sources > builtAt()) execSync('npm run build --silent', { cwd: root, stdio: 'inherit' });
