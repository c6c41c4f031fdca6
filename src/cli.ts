/**
 * The `eddy` command's entry: what bin/eddy (through src/cli-entry.ts) and
 * the bundle (scripts/bundle.js) start from. The commands and their flags
 * are in src/cli/.
 */
import { main } from './cli/main';

export { main };

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    if (code >= 0) process.exit(code);
  });
}
