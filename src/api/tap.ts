import type { Request, Response } from 'express';
import { TapClient, type TapHub, type TapKind, type TapOptions } from '../runtime/observe/tap';

/** A comment line every so often, so proxies keep the stream open and a vanished peer shows up as a write error. */
const KEEP_ALIVE_MS = 15_000;

/**
 * Streams a tapped port as Server-Sent Events. Writes respect the socket:
 * while it takes nothing (`write` returned false) the client's queue fills
 * and then counts what it misses; `drain` writes the rest. The hub is left
 * as soon as the stream ends for any reason (max reached, instance stopped,
 * client gone, client stalled), so the port is untapped again.
 */
export function streamTap(
  hub: TapHub,
  req: Request,
  res: Response,
  at: { kind: TapKind; artefact: string; instance: string; port: string },
  options: TapOptions,
): void {
  let scheduled = false;
  let done = false;
  const client = new TapClient(at.port, options, () => {
    if (scheduled || done) return;
    scheduled = true;
    // written on the next turn: the hot path only queues, and several events go out in one write
    setImmediate(pump);
  });
  hub.open(at.kind, at.artefact, at.instance, at.port, client);

  const finish = () => {
    if (done) return;
    done = true;
    clearInterval(keepAlive);
    hub.close(at.kind, at.artefact, at.instance, client);
  };
  const pump = () => {
    scheduled = false;
    if (done) return;
    if (client.stalled) {
      finish();
      res.destroy(); // it reads nothing: a goodbye would only wait in its buffer
      return;
    }
    if (client.blocked) return;
    const text = client.take();
    if (text !== '' && !res.write(text)) client.blocked = true;
    if (client.finished) {
      finish();
      res.end(`event: end\ndata: ${JSON.stringify({ reason: client.ended })}\n\n`);
    }
  };

  /** keep-alive ticks the socket has spent blocked since the stream ended */
  let blockedAfterEnd = 0;
  res.on('drain', () => {
    blockedAfterEnd = 0;
    client.drained();
    pump();
  });
  res.on('close', finish);
  const keepAlive = setInterval(() => {
    if (done) return;
    if (!client.blocked) res.write(': keep-alive\n\n');
    // no event comes any more to count as missed: a client that takes nothing for a whole tick after the end is gone
    else if (client.ended !== undefined && ++blockedAfterEnd >= 2) {
      finish();
      res.destroy();
    }
  }, KEEP_ALIVE_MS);
  keepAlive.unref();

  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  if (req.method === 'HEAD') {
    finish();
    res.end();
    return;
  }
  // the first bytes tell the client the tap is in place
  res.write(`: tapping /${at.kind}/${at.artefact}/${at.instance}/${at.port}\n\n`);
}
