import { Observable, Subscription } from '../../core/rx';
import type { Insight, PortEvent } from '../../core/event';
import type { OperatorContext, OperatorNode, OperatorType } from '../operator';
import { markOwn, nodeUrl, ownMeta } from './_shared/support';
import { s } from '../../schema/typed';
import { duration, durationMs } from '../../schema/duration';
import type { Input } from '../../schema/typed';

const DEFAULT_STEPS = [50, 100, 250, 500, 1000, 5000, 10000];

/** What an ack's meta time is measured against: a bare number is ms; 0 lets none pass. */
const ACK_TIMEOUT = { zero: 'counts every timed ack as a failure' } as const;

/** The `timeout` of backpressure and percentile: the slowest ack that is still good news. */
export const ackTimeout = () => duration('an ack with a meta time above this counts as a failure', ACK_TIMEOUT);

/** The `timeout` of backpressure and percentile, read. */
export const ackTimeoutMs = (value: number | string) => durationMs(value, 'timeout', ACK_TIMEOUT);

const configSchema = s.object(
  {
    timeout: ackTimeout(),
    steps: s.array(duration('a back-off step'), { minItems: 1, default: DEFAULT_STEPS, description: 'back-off steps (durations)' }),
    circuit_breaker: s.boolean({ default: false, description: 'trigger the upstream circuit breaker while backing off' }),
  },
  {
    description: 'Backs off from a failing output: after a bad insight only one probe event per back-off step passes, the rest go to `overflow`.',
    required: ['timeout'],
  },
);

export type BackpressureConfig = Input<typeof configSchema>;

/** Bad news about a delivery: a fail, an error, a trigger, or a too slow ack. */
export function isBad(insight: Insight, timeout: number): boolean {
  if (insight.kind === 'fail' || insight.kind === 'trigger') return true;
  if (insight.meta?.error !== undefined) return true;
  const time = insight.meta?.time;
  return typeof time === 'number' && time > timeout;
}

/**
 * Backs off from a failing output. While backing off it lets through at most
 * one event per back-off period (a probe) and sends the rest to `overflow`.
 * Each bad insight about its own events climbs one step; a good one resets.
 * When the period has passed (a scheduler timer, not a tick) the output is
 * probed again and, with `circuit_breaker`, the upstream breaker is restored.
 */
export function backpressureNode(config: BackpressureConfig, ctx: OperatorContext): OperatorNode {
  const steps = (config.steps ?? DEFAULT_STEPS).map((step, i) => durationMs(step, `steps[${i}]`));
  const timeoutMs = ackTimeoutMs(config.timeout);
  const from = nodeUrl(ctx);
  let step = 0; // 0: healthy; n: backing off steps[n-1] ms
  let next = -Infinity; // scheduler time before which events overflow
  let triggered = false;
  let recovery: Subscription | undefined;

  const restore = () => {
    if (!triggered) return;
    triggered = false;
    ctx.insight({ kind: 'restore', from });
  };
  const backOff = () => {
    step = Math.min(step + 1, steps.length);
    const delay = steps[step - 1];
    next = ctx.scheduler.now() + delay;
    if (config.circuit_breaker && !triggered) {
      triggered = true;
      ctx.insight({ kind: 'trigger', from });
    }
    recovery?.unsubscribe();
    // the step is kept: a probe that fails again climbs to the next one
    recovery = ctx.scheduler.schedule(() => {
      recovery = undefined;
      restore();
    }, delay);
  };
  const recover = () => {
    step = 0;
    next = -Infinity;
    recovery?.unsubscribe();
    recovery = undefined;
    restore();
  };

  return {
    ports: ['overflow'],
    apply: (input) =>
      new Observable<PortEvent>((subscriber) => {
        const sub = input.subscribe({
          next: (event) => {
            // transactional, so the offramps tell us how the delivery went
            const own = markOwn(event, ctx.uid, true, true);
            const now = ctx.scheduler.now();
            if (now < next) return subscriber.next({ port: 'overflow', event: own });
            if (step > 0) next = now + steps[step - 1];
            subscriber.next({ port: 'out', event: own });
          },
          error: (err: unknown) => subscriber.error(err),
          complete: () => subscriber.complete(),
        });
        return () => {
          sub.unsubscribe();
          recovery?.unsubscribe();
          recovery = undefined;
        };
      }),
    onInsight(insight) {
      if (ownMeta(insight, ctx.uid) === undefined) return insight;
      if (isBad(insight, timeoutMs)) backOff();
      else recover();
      // its own trigger/restore is handled here (or by its own breaker signal); acks and fails go on
      return insight.kind === 'trigger' || insight.kind === 'restore' ? null : insight;
    },
  };
}

/** qos::backpressure */
export const backpressure: OperatorType<BackpressureConfig> = {
  name: 'qos::backpressure',
  examples: [{ timeout: 100 }],
  outputPorts: () => ['overflow'],
  configSchema,
  create: (config, ctx) => backpressureNode(config, ctx),
};
