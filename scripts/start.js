#!/usr/bin/env node
// `npm start` runs the default example; `npm start -- ARGS` runs `eddy server run ARGS` exactly.
const path = require('node:path');
const args = process.argv.slice(2);
const runArgs = args.length > 0 ? args : ['-f', path.join(__dirname, '..', 'examples', 'default.yaml')];
require('../dist/src/cli-entry.js')
  .runCli(['server', 'run', ...runArgs])
  .then((code) => {
    if (code >= 0) process.exit(code);
  });
