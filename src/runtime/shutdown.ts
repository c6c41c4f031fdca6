import type { PipelineRuntime } from '../pipeline/pipeline';
import type { InstanceRecord } from './live';

/** Who triggers every onramp's breaker when the runtime shuts down. */
export const SHUTDOWN = 'runtime shutdown';

/**
 * Stops the sources, lets in-flight events drain, closes the sinks: the
 * onramps' breakers are triggered (they stop reading), then each
 * pipeline's inputs complete (upstream pipelines first), so operators
 * holding events (a batch, open windows) flush them downstream; then the
 * offramps finish their in-flight sends and close, their acks reaching the
 * onramps, which are disconnected and closed last (a kafka onramp commits
 * what was acked as it leaves its group). The links between pipelines and
 * sinks are undone after that, and the pipelines stopped.
 */
export async function stopInstances(records: InstanceRecord[]): Promise<void> {
  const onramps = records.flatMap((r) => (r.live.kind === 'onramp' ? [r.live.onramp] : []));
  const offramps = records.flatMap((r) => (r.live.kind === 'offramp' ? [r.live.offramp] : []));
  const pipelines = records.flatMap((r) => (r.live.kind === 'pipeline' ? [r.live.pipeline] : []));
  const bindings = records.flatMap((r) => (r.live.kind === 'binding' ? [r.live.binding] : []));
  // the sources pause (their gate holds what still comes) but stay connected and open, so that the acks
  // of what the drain flushes reach them: a kafka onramp commits those while it is still in its group
  for (const onramp of onramps) onramp.runtime.contraflow({ kind: 'trigger', from: SHUTDOWN });
  drainInOrder(pipelines);
  // one turn of the event loop for synchronous sinks to flush what they buffered
  await new Promise((r) => setImmediate(r));
  await Promise.all(offramps.map((o) => o.close()));
  for (const b of bindings) for (const undo of b.sourceDisconnects.splice(0)) undo();
  await Promise.all(onramps.map((o) => o.close()));
  for (const b of bindings) for (const undo of b.disconnects.splice(0)) undo();
  await Promise.all(pipelines.map((p) => p.stop()));
}

/** Completes the pipelines' inputs, each after every pipeline feeding it. */
function drainInOrder(pipelines: PipelineRuntime[]): void {
  const pending = new Set(pipelines);
  while (pending.size > 0) {
    const ready = [...pending].filter((p) => !p.upstreamPipelines().some((u) => pending.has(u)));
    // a cycle of pipelines (never built by activation, but cheap to guard): drain the rest as they are
    for (const p of ready.length > 0 ? ready : [...pending]) {
      p.drain();
      pending.delete(p);
    }
  }
}
