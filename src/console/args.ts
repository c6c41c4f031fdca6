import { flagValue } from '../core/argv';
import type { ClientOptions } from './client';

export const DEFAULT_API = 'http://127.0.0.1:9898';

export interface ConsoleArgs extends ClientOptions {
  json: boolean;
}

/** `--api URL`, `--token T` or `--api-token T` (or EDDY_API / EDDY_API_TOKEN), and `--json` where `allowJson`. */
export function parseConsoleArgs(command: string, args: string[], env: NodeJS.ProcessEnv, allowJson: boolean): ConsoleArgs {
  const parsed: ConsoleArgs = { api: env.EDDY_API || DEFAULT_API, token: env.EDDY_API_TOKEN || undefined, json: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = () => flagValue(args, ++i, arg, `${command}: `);
    if (arg === '--api') parsed.api = value();
    // --api-token as `eddy tap` and `eddy server run` spell it
    else if (arg === '--token' || arg === '--api-token') parsed.token = value();
    else if (arg === '--json' && allowJson) parsed.json = true;
    else throw new Error(`${command}: unknown argument '${arg}'`);
  }
  let url: URL;
  try {
    url = new URL(parsed.api);
  } catch {
    throw new Error(`${command}: --api: not a URL: '${parsed.api}' (e.g. ${DEFAULT_API})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${command}: --api: must be an http or https URL, not '${parsed.api}'`);
  return parsed;
}
