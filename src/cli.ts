/**
 * The `eddy` command's entry: what bin/eddy (through src/cli-entry.ts) and
 * the bundle (scripts/bundle.js) start from. The commands and their flags
 * are in src/cli/.
 */
import { main } from './cli/main';

export { main };

if (require.main === module) {
  // main answers every error with an exit code; a rejection would be a bug, left to node (it prints it and exits 1)
  void main(process.argv.slice(2)).then((code) => {
    if (code >= 0) process.exit(code);
  });
}
