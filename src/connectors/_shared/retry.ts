/**
 * An offramp's retry policy (the artefact's `retry`, docs/delivery.md
 * "Retries"): which failed sends are tried again, how often, and after how
 * long. The offramp machinery (offramp.ts) runs it on the runtime's
 * scheduler, so tests run the delays in virtual time.
 */
import { NO_JITTER, fullJitter, type Random } from '../../core/jitter';
import { durationMs } from '../../schema/duration';
import { RETRY_ON, type RetryConfig } from '../../schema/artefacts';

export type { RetryConfig };

/** Why a send failed, as far as a retry cares. */
export type FailureClass = 'connection' | 'timeout' | '429' | '4xx' | '5xx' | 'other';

/** The classes `on` may name (schema/artefacts.ts); `any` retries every failure. */
type RetryOn = (typeof RETRY_ON)[number];

const DEFAULT_ON: readonly RetryOn[] = ['connection', 'timeout', '429', '5xx'];

/** Node and undici error codes of a connection that could not be made or was lost. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * The class of a sink's error: a `status` (an HTTP answer) first, then a
 * Node or undici `code`. A sink that knows more sets them on its Error.
 */
export function classify(err: unknown): FailureClass {
  const { status, code } = (err ?? {}) as { status?: unknown; code?: unknown };
  if (typeof status === 'number') {
    if (status === 429) return '429';
    if (status >= 500) return '5xx';
    if (status >= 400) return '4xx';
  }
  if (typeof code === 'string') {
    if (CONNECTION_CODES.has(code)) return 'connection';
    if (TIMEOUT_CODES.has(code)) return 'timeout';
  }
  return 'other';
}

export class RetryPolicy {
  readonly attempts: number;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly random: Random;
  private readonly on: ReadonlySet<RetryOn>;

  /** Throws naming the field of a duration that is not one (the schema checked the rest). */
  constructor(config: RetryConfig) {
    this.attempts = config.attempts;
    this.initialMs = config.backoff?.initial === undefined ? 100 : durationMs(config.backoff.initial, 'retry.backoff.initial');
    this.maxMs = config.backoff?.max === undefined ? 10_000 : durationMs(config.backoff.max, 'retry.backoff.max');
    this.factor = config.backoff?.factor ?? 2;
    this.random = config.backoff?.jitter === false ? NO_JITTER : Math.random;
    this.on = new Set((config.on ?? DEFAULT_ON).map((c) => String(c) as RetryOn));
  }

  /** Whether a send that failed with `err` at attempt `attempt` (1 = the first send) is tried again. */
  retries(err: unknown, attempt: number): boolean {
    if (attempt >= this.attempts) return false;
    return this.on.has('any') || this.on.has(classify(err) as RetryOn);
  }

  /**
   * The delay before attempt `attempt + 1`: drawn up to a cap doubling (by
   * `factor`) from `initial`, at most `max` (full jitter unless `jitter:
   * false`); a `Retry-After` the sink read from the answer
   * (`err.retryAfterMs`) counts when it is longer.
   */
  delayMs(err: unknown, attempt: number): number {
    const backoff = fullJitter(Math.min(this.maxMs, this.initialMs * this.factor ** (attempt - 1)), this.random);
    const asked = (err as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
    return typeof asked === 'number' && asked > backoff ? Math.min(asked, this.maxMs) : backoff;
  }
}
