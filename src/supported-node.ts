// Which Node.js eddy runs on, checked before anything else loads: on an older
// Node a user gets one line naming the version it needs and how to get it,
// not a stack trace from whichever newer API happens to run first.
// Kept free of imports so that bin/eddy can load it on any Node.

/** The oldest Node.js major eddy supports: package.json's `engines` say the same. */
export const MIN_NODE_MAJOR = 24;

/** The Node.js line eddy is developed and tested on; a clone's `npm install` brings it. */
export const DEVELOPED_ON_MAJOR = 26;

/** Why this Node cannot run eddy, or undefined when it can. */
export function unsupportedNode(version: string = process.versions.node, execPath: string = process.execPath): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= MIN_NODE_MAJOR) return undefined;
  return (
    `eddy needs Node.js ${MIN_NODE_MAJOR} or newer; this is Node.js ${version} (${execPath}).\n` +
    `  In a clone of eddy: \`npm install\` brings Node.js ${DEVELOPED_ON_MAJOR} from the npm registry, and \`npm start\`, \`npm test\` and \`npx eddy\` use it.\n` +
    `  Elsewhere: install Node.js ${MIN_NODE_MAJOR} or newer (https://nodejs.org, or your package manager), or run once through npm's copy: npx -y node@${DEVELOPED_ON_MAJOR} "$(command -v eddy)" ARGS\n`
  );
}
