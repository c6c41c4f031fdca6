import { streamTap, type TapTarget } from '../api/tap-command';
import { defineCommand, type CommandLine } from './command';
import { API_URL_FLAG, apiUrl, TOKEN_FLAG } from './remote';

const FLAGS = {
  api: API_URL_FLAG,
  token: TOKEN_FLAG,
  // the tap's query parameters, passed as they are: the API checks them (docs/observe.md) and has their defaults
  sample: { type: 'string', value: 'N', description: 'send every Nth event passing the port (the API sends each)' },
  rate: { type: 'string', value: 'R', description: 'send at most R events a second; the rest are missed' },
  max: { type: 'string', value: 'M', description: 'end the stream after M events' },
  queue: { type: 'string', value: 'Q', description: 'events held while stdout takes nothing, beyond which they are missed (the API holds 1000)' },
} as const;

const QUERY = ['sample', 'rate', 'max', 'queue'] as const;

/**
 * The tap URL from the command line: a full URL, a path (`/tap/pipeline/p/main/out`)
 * or the port itself (`pipeline/p/main/out`), on the API at `--api`, with
 * the query built from the flags.
 */
function tapTarget({ values, operands }: CommandLine<typeof FLAGS>): TapTarget {
  if (operands.length === 0) throw new Error('which port? give its URL, e.g. pipeline/system::passthrough/main/out');
  if (operands.length > 1) throw new Error(`one URL only: '${operands[0]}' and '${operands[1]}'`);
  const [target] = operands;
  let url: URL;
  if (/^https?:\/\//.test(target)) url = new URL(target);
  else {
    const path = target.replace(/^\/+/, '');
    url = new URL(`/${path.startsWith('tap/') ? path : `tap/${path}`}`, apiUrl(values.api));
  }
  for (const name of QUERY) {
    const value = values[name];
    if (value !== undefined) url.searchParams.set(name, value);
  }
  return { url: url.toString(), token: values.token };
}

export const tapCommand = defineCommand({
  name: 'tap',
  summary: 'print the events passing a port of a running eddy',
  description:
    'URL is a full URL, a path (/tap/pipeline/p/main/out) or the port (pipeline/p/main/out) on the API at --api. Each event goes to ' +
    'stdout as a JSON line; `missed N events` and `tap ended: REASON` go to stderr (docs/observe.md). Exit 0 when the API ends the ' +
    'stream, 1 when it refuses (its message on stderr) or cannot be reached, 2 for bad usage.',
  operands: 'URL',
  flags: FLAGS,
  options: tapTarget,
  run: (target) => streamTap(target, process.stdout, process.stderr),
});
