// eslint-disable-next-line @typescript-eslint/no-require-imports
export const version: string = (require('../../package.json') as { version: string }).version;
