import { once } from 'node:events';
import { flagValue } from '../core/argv';

export const TAP_USAGE = 'eddy tap URL [--api URL] [--sample N] [--rate R] [--max M] [--queue Q] [--api-token TOKEN]';

interface TapArgs {
  url: string;
  token?: string;
}

/**
 * The tap URL from the command line: a full URL, a path (`/tap/pipeline/p/main/out`)
 * or the port itself (`pipeline/p/main/out`), on the API at `--api`
 * (default http://127.0.0.1:9898), with the query built from the flags.
 */
export function parseTapArgs(args: string[], env: NodeJS.ProcessEnv): TapArgs {
  let target: string | undefined;
  let api = 'http://127.0.0.1:9898';
  let token = env.EDDY_API_TOKEN || undefined;
  const query = new URLSearchParams();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = () => flagValue(args, ++i, arg);
    if (arg === '--api') api = value();
    else if (arg === '--api-token') token = value();
    else if (['--sample', '--rate', '--max', '--queue'].includes(arg)) query.set(arg.slice(2), value());
    else if (arg.startsWith('-')) throw new Error(`unknown argument '${arg}'`);
    else if (target === undefined) target = arg;
    else throw new Error(`one URL only: '${target}' and '${arg}'`);
  }
  if (target === undefined) throw new Error('which port? give its URL, e.g. pipeline/system::passthrough/main/out');
  let url: URL;
  if (/^https?:\/\//.test(target)) url = new URL(target);
  else {
    const path = target.replace(/^\/+/, '');
    url = new URL(`/${path.startsWith('tap/') ? path : `tap/${path}`}`, api);
  }
  for (const [name, v] of query) url.searchParams.set(name, v);
  return { url: url.toString(), token };
}

/**
 * `eddy tap`: prints each event passing the port as one JSON line on
 * stdout, and the stream's `missed` and `end` notices on stderr. Exits 0
 * when the server ends the stream, 1 when the API refuses or cannot be reached.
 */
export async function tapCommand(args: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream, env = process.env): Promise<number> {
  const { url, token } = parseTapArgs(args, env);
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) } });
  } catch (e) {
    err.write(`error: cannot reach ${url}: ${(e as Error).cause ?? (e as Error).message}\n`);
    return 1;
  }
  if (res.status !== 200 || !res.body) {
    const text = await res.text();
    let message = text;
    try {
      message = (JSON.parse(text) as { error: string }).error;
    } catch {
      // not the API's JSON error: print it as it came
    }
    err.write(`error: ${res.status}: ${message}\n`);
    return 1;
  }
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const message = parseMessage(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (message.event === 'event') {
        // stdout's own backpressure slows the reading, and the server counts what this client misses
        if (!out.write(`${message.data}\n`)) await once(out, 'drain');
      } else if (message.event === 'missed') {
        const { missed, total_missed } = JSON.parse(message.data) as { missed: number; total_missed: number };
        err.write(`missed ${missed} events (${total_missed} in all)\n`);
      } else if (message.event === 'end') {
        err.write(`tap ended: ${(JSON.parse(message.data) as { reason: string }).reason}\n`);
        return 0;
      }
    }
  }
  err.write('tap ended: the server closed the stream\n');
  return 0;
}

/** One SSE message: its event name and its data lines joined; comments are left out. */
function parseMessage(block: string): { event: string; data: string } {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  return { event, data: data.join('\n') };
}
