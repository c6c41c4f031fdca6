import type { Histogram } from 'hdr-histogram-js';
import { hostname } from 'node:os';
import { BehaviorSubject, Observable, asyncScheduler, filter, switchMap, take, type SchedulerLike } from '../core/rx';
import { childLogger, type Logger } from '../core/logger';
import { CircuitBreaker } from '../contraflow/circuit-breaker';
import { OnrampRuntime, onrampContext } from '../ramps/onramp';
import { OfframpRuntime } from '../ramps/offramp';
import type { EddyEvent } from '../core/event';
import { EddyError, invalid } from '../core/errors';
import type { Codec } from '../codecs/codec';
import { codecName } from '../codecs/spec';
import { builtinMimeMap, codecForMime } from '../codecs/mime';
import { PipelineRuntime } from '../pipeline/pipeline';
import { processorConfig, processorName, type Preprocessor, type ProcessorSpec } from '../processors/processor';
import type { Registries } from './registries';
import type { Repository } from './repository';
import type { OnrampArtefact, OfframpArtefact, RampArtefact, StoredPipeline } from './artefacts';
import { RetryPolicy } from '../connectors/_shared/retry';
import type { TypeRegistry } from '../core/registry';
import type { OperatorType } from '../pipeline/operator';
import type { SharedListeners } from '../connectors/connector';

export interface InstanceEnv {
  readonly registries: Registries;
  readonly repository: Repository;
  readonly logger: Logger;
  /** the clock of every timer in the instances (an RxJS TestScheduler in virtual-time tests); real time when absent */
  readonly scheduler?: SchedulerLike;
  /** plain functions (no `this`), handed on to every instance's context */
  readonly nextUid: () => number;
  /** `--data-dir`: where operators keep what must outlive the process when their config names no place */
  readonly dataDir?: string;
  readonly requestExit: (code: number, reason: string) => void;
  /** where measuring offramps (blackhole) hand their finished measurements; absent: nobody collects them */
  readonly onMeasurement?: MeasurementListener;
  /** where onramps bind their connection listeners (a worker's primary); absent: in this process */
  readonly sharedListeners?: SharedListeners;
}

/** Takes an offramp's finished measurement: the instance's url, its report, the latency histogram it was made from. */
export type MeasurementListener = (url: string, report: object, histogram: Histogram) => void;

const HOST = hostname();

/** An onramp instance: the shared machinery around its type's source, plus the err_required gate. */
export class OnrampInstance {
  /** out events, held back while err_required waits for an err connection */
  readonly out$: Observable<EddyEvent>;
  private readonly errConnected = new BehaviorSubject<boolean>(false);

  private constructor(
    readonly url: string,
    readonly artefact: OnrampArtefact,
    readonly runtime: OnrampRuntime,
  ) {
    this.out$ = artefact.err_required
      ? this.errConnected.pipe(
          filter(Boolean),
          take(1),
          switchMap(() => this.runtime.out$),
        )
      : this.runtime.out$;
  }

  /** Creates the type's source (binding its port, opening its file): a failure is a 400 naming the onramp and the cause. */
  static async create(url: string, artefact: OnrampArtefact, env: InstanceEnv): Promise<OnrampInstance> {
    const type = env.registries.onramps.get(artefact.type);
    const config = env.repository.rampConfig('onramp', artefact);
    const codecs = codecCache(env);
    const codec = await rampCodec('onramp', artefact, env, type.defaultCodec);
    const breaker = new CircuitBreaker();
    const shared = env.sharedListeners;
    const ctx = onrampContext(rampContext(url, artefact.type, env), breaker, {
      linked: artefact.linked === true,
      codecForMime: mimeLookup(env, artefact, codec.name),
      scheduler: env.scheduler,
      listenForConnections: shared && ((server, host, port) => shared.listen(url, server, host, port)),
    });
    const source = await cannotStart('onramp', artefact, () => type.create(config, ctx));
    const specs = withFraming(env, type.framing, artefact.preprocessors ?? []);
    const runtime = new OnrampRuntime({
      ctx,
      breaker,
      source,
      codec,
      codecs,
      preprocessors: preprocessorChain(env, specs),
      postprocessors: postprocessors(env, artefact.postprocessors),
    });
    return new OnrampInstance(url, artefact, runtime);
  }

  get err$(): Observable<EddyEvent> {
    return this.runtime.err$;
  }

  noteErrConnected(): void {
    this.errConnected.next(true);
  }

  close(): Promise<void> {
    return this.runtime.close();
  }
}

export async function createOfframp(url: string, artefact: OfframpArtefact, env: InstanceEnv): Promise<OfframpRuntime> {
  const type = env.registries.offramps.get(artefact.type);
  const config = env.repository.rampConfig('offramp', artefact);
  const codecs = codecCache(env);
  const codec = await rampCodec('offramp', artefact, env, type.defaultCodec);
  const concurrency = type.maxInFlight?.(config) ?? (typeof config.concurrency === 'number' ? config.concurrency : 256);
  const onMeasurement = env.onMeasurement;
  const offramp = new OfframpRuntime({
    ctx: rampContext(url, artefact.type, env),
    publishMeasurement: onMeasurement && ((report, histogram) => onMeasurement(url, report, histogram)),
    codec,
    codecs,
    postprocessors: type.ignoresPostprocessors || type.ignoresPayloads ? [] : postprocessors(env, artefact.postprocessors),
    ignoresPayloads: type.ignoresPayloads,
    preprocessors: preprocessorChain(env, artefact.preprocessors ?? []),
    linked: artefact.linked === true,
    codecForMime: mimeLookup(env, artefact, codec.name),
    autoAck: type.autoAck,
    maxInFlight: concurrency,
    scheduler: env.scheduler,
    createSink: (ctx) => type.create(config, ctx),
    retry: artefact.retry && new RetryPolicy(artefact.retry),
    deadLetter: artefact.dead_letter,
  });
  await cannotStart('offramp', artefact, () => offramp.start());
  return offramp;
}

/**
 * The offramp's second phase, once every part of its activation has opened
 * (the file offramp truncates its file only now): a failure is a 400 naming
 * the offramp, like a failure to open.
 */
export function commitOfframp(artefact: OfframpArtefact, offramp: OfframpRuntime): Promise<void> {
  return cannotStart('offramp', artefact, () => offramp.commit());
}

/** The type's own framing first, unless the artefact's list starts with a preprocessor that splits by itself. */
function withFraming(env: InstanceEnv, framing: string | undefined, specs: ProcessorSpec[]): ProcessorSpec[] {
  if (framing === undefined) return specs;
  if (specs.length > 0 && env.registries.preprocessors.get(processorName(specs[0])).splits) return specs;
  return [framing, ...specs];
}

/** A ramp's context; its logger's lines name the type and the instance (`[kafka /onramp/in/main]`; EDDY_LOG=kafka=debug picks them). */
function rampContext(url: string, type: string, env: InstanceEnv) {
  return { url, uid: env.nextUid(), hostname: HOST, logger: childLogger(env.logger, { module: type, instance: url }), requestExit: env.requestExit };
}

/** Builds a fresh preprocessor chain (each stream, each response keeps its own state). */
function preprocessorChain(env: InstanceEnv, specs: ProcessorSpec[]): () => Preprocessor[] {
  return () => specs.map((s) => env.registries.preprocessors.get(processorName(s)).create(processorConfig(s)));
}

function postprocessors(env: InstanceEnv, specs: ProcessorSpec[] | undefined) {
  return (specs ?? []).map((s) => env.registries.postprocessors.get(processorName(s)).create(processorConfig(s)));
}

/**
 * The ramp's own codec: made with its config (`codec: {name, config}`) and
 * opened (a registry codec fetches its schemas); a failure is a 400 naming
 * the ramp and the cause.
 */
async function rampCodec(kind: 'onramp' | 'offramp', artefact: RampArtefact, env: InstanceEnv, fallback: string): Promise<Codec> {
  const spec = artefact.codec ?? fallback;
  return cannotStart(kind, artefact, async () => {
    const codec = env.registries.codecs.get(codecName(spec), 'codec').create(env.repository.codecConfig(spec));
    await codec.open?.(kind);
    return codec;
  });
}

/** One codec instance per name per ramp (codecs are stateless). */
function codecCache(env: InstanceEnv): (name: string) => Codec {
  const codecs = new Map<string, Codec>();
  return (name) => {
    let codec = codecs.get(name);
    if (!codec) codecs.set(name, (codec = env.registries.codecs.get(name, 'codec').create()));
    return codec;
  };
}

function mimeLookup(env: InstanceEnv, artefact: RampArtefact, fallback: string): (contentType: string | undefined) => string {
  // built on the first content type: the map reads every codec, and loading them all would cost each ramp that never sees one
  let map: Record<string, string> | undefined;
  return (contentType) => {
    if (!contentType) return fallback;
    map ??= { ...builtinMimeMap(env.registries.codecs.names().map((n) => env.registries.codecs.get(n))), ...(artefact.codec_map ?? {}) };
    return codecForMime(contentType, map, fallback);
  };
}

/** A source or sink that cannot be opened fails the activation with a 400 that names the artefact and the cause. */
async function cannotStart<T>(kind: 'onramp' | 'offramp', artefact: RampArtefact, open: () => T | Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (err) {
    if (err instanceof EddyError) throw err;
    throw invalid(`${kind} '${artefact.id}' (${artefact.type}) cannot start: ${(err as Error).message}`);
  }
}

export function createPipeline(url: string, artefact: StoredPipeline, env: InstanceEnv): PipelineRuntime {
  const withDefaults: StoredPipeline = {
    ...artefact,
    nodes: artefact.nodes.map((n, i) => ({ ...n, config: env.repository.operatorConfig(n.type, n.config, `nodes[${i}]`) })),
  };
  return new PipelineRuntime(withDefaults, {
    url,
    // each type is created with the config the repository validated against its own schema
    operators: env.registries.operators as TypeRegistry<OperatorType>,
    scheduler: env.scheduler ?? asyncScheduler,
    logger: childLogger(env.logger, { module: 'pipeline', instance: url }),
    nextUid: env.nextUid,
    dataDir: env.dataDir,
  });
}
