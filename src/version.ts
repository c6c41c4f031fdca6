// eslint-disable-next-line @typescript-eslint/no-require-imports -- package.json is read at run time, not compiled into dist
export const version: string = (require('../../package.json') as { version: string }).version;
