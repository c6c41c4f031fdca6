#!/usr/bin/env node
// Build step (`npm run build`, after tsc and precompile): bundles the compiled
// CLI (dist/src/cli.js) with rxjs and yaml into one file,
// dist/src/cli.bundle.js, which `eddy server run` starts from (see
// src/cli-entry.ts). Loading ~210 small modules one by one (resolve, stat,
// read, compile each) was most of eddy's start-up; one file is read and
// compiled at once (bench/README.md, "Start-up").
//
// Every other package stays external (required from node_modules when first
// used, as before): connector libraries keep loading lazily, and native or
// data-carrying packages stay as they are. The lazy catalogs
// (src/*/catalog.ts) keep their laziness: a bundled module runs only when
// first required.
//
// The bundle lives in dist/src/, so a bundled module's `__dirname` would be
// dist/src/ instead of its own directory; it is rewritten to the module's
// own directory (relative to the bundle, so an installed package still
// works). The files that use it: the precompiled validators' directory,
// the UI directory, the YAML worker thread and the workers' script.
//
// Then the V8 code cache of the bundle (cli.bundle.js.cache, see
// src/cli-entry.ts loadBundle): the bundle is started on bench/startup.yaml
// and, at its first event, V8 serialises every function compiled so far, so
// the start-up path of a real `server run` comes compiled.
const { execFileSync } = require('node:child_process');
const { readFileSync, rmSync } = require('node:fs');
const { dirname, join, relative } = require('node:path');
const esbuild = require('esbuild');

const DIST_SRC = join(__dirname, '..', 'dist', 'src');
const ENTRY = join(DIST_SRC, 'cli.js');
const BUNDLE = join(DIST_SRC, 'cli.bundle.js');
const CODE_CACHE = `${BUNDLE}.cache`;
// the start-up benchmark's one flow (metronome -> passthrough -> stdout): what the code cache is made on
const FLOW = join(__dirname, '..', 'bench', 'startup.yaml');
// packages inlined: the ones every start loads, by hundreds of modules
const INLINED = /^(rxjs|yaml)(\/|$)/;

/** `__dirname` of a bundled module of dist/src: its directory, from the bundle's. */
const ownDirname = {
  name: 'own-dirname',
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, (args) => {
      if (!args.path.startsWith(DIST_SRC)) return undefined;
      const source = readFileSync(args.path, 'utf8');
      if (!/\b__dirname\b/.test(source)) return undefined;
      const rel = relative(DIST_SRC, dirname(args.path)).split('\\').join('/');
      return { contents: source.replace(/\b__dirname\b/g, `require("node:path").join(__dirname, ${JSON.stringify(rel)})`), loader: 'js' };
    });
  },
};

/** Every package but rxjs and yaml is required at run time, from node_modules. */
const externalPackages = {
  name: 'external-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => (INLINED.test(args.path) ? undefined : { path: args.path, external: true }));
  },
};

async function bundle() {
  // first, so a cache is never older than the bundle it was made from (V8 checks only the source's length)
  rmSync(CODE_CACHE, { force: true });
  await esbuild.build({
    entryPoints: [ENTRY],
    outfile: BUNDLE,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    logLevel: 'warning',
    // precompiled.js requires its generated validators by computed path: they stay files
    logOverride: { 'unsupported-require-call': 'silent' },
    plugins: [externalPackages, ownDirname],
  });
  writeCodeCache();
  return BUNDLE;
}

/** Starts the bundle on FLOW in a child; at its first event the child writes the code cache and exits. */
function writeCodeCache() {
  const script = `
      const { writeFileSync } = require('node:fs');
      const { loadBundle } = require(${JSON.stringify(join(DIST_SRC, 'cli-entry.js'))});
      const { exports: cli, script } = loadBundle(${JSON.stringify(BUNDLE)}, false);
      process.stdout.write = (chunk) => {
        if (!String(chunk).trimStart().startsWith('{')) return true;
        writeFileSync(${JSON.stringify(CODE_CACHE)}, script.createCachedData());
        process.exit(0);
      };
      cli.main(['server', 'run', '-f', ${JSON.stringify(FLOW)}, '--no-api']);
    `;
  execFileSync(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000, env: { ...process.env, EDDY_LOG: 'warn' } });
}

if (require.main === module) {
  bundle().then(
    (file) => process.stderr.write(`bundled the CLI into ${file}, with its V8 code cache\n`),
    (err) => {
      process.stderr.write(`bundle: ${err.message}\n`);
      process.exit(1);
    },
  );
}

module.exports = { bundle, BUNDLE };
