/** The flags of the commands that talk to a running eddy through its REST API (tap, status, top). */
import type { Flag } from './command';

export const DEFAULT_API = 'http://127.0.0.1:9898';

export const API_URL_FLAG = {
  type: 'string',
  value: 'URL',
  default: DEFAULT_API,
  env: 'EDDY_API',
  description: 'the REST API of the running eddy',
} as const satisfies Flag;

/** `--token`, also taken as `--api-token` (the server's own flag's name): every remote command takes both. */
export const TOKEN_FLAG = {
  type: 'string',
  value: 'TOKEN',
  aliases: ['api-token'],
  env: 'EDDY_API_TOKEN',
  description: 'the API token, sent as Authorization: Bearer TOKEN',
} as const satisfies Flag;

/** `--api`, checked before any request: an http or https URL. */
export function apiUrl(api: string): string {
  let url: URL;
  try {
    url = new URL(api);
  } catch {
    throw new Error(`--api: not a URL: '${api}' (e.g. ${DEFAULT_API})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--api: must be an http or https URL, not '${api}'`);
  return api;
}
