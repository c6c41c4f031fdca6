import { once } from 'node:events';

/** The tap stream to read (src/cli/tap.ts makes it from the command line), and the API token to send. */
export interface TapTarget {
  url: string;
  token?: string;
}

/**
 * `eddy tap`: prints each event passing the port as one JSON line on
 * stdout, and the stream's `missed` and `end` notices on stderr. Exits 0
 * when the server ends the stream, 1 when the API refuses or cannot be reached.
 */
export async function streamTap({ url, token }: TapTarget, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) } });
  } catch (e) {
    err.write(`error: cannot reach ${url}: ${describeCause(e as Error)}\n`);
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

/** What a failed fetch says: its cause (the refused connection) when it has one, as text. */
function describeCause(e: Error): string {
  const cause: unknown = e.cause;
  if (cause === undefined || cause === null) return e.message;
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : JSON.stringify(cause);
}
