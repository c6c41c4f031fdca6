import { hostname } from 'node:os';
import { BehaviorSubject, Observable, asyncScheduler, filter, switchMap, take } from 'rxjs';
import type { Logger } from '../core/logger';
import { CircuitBreaker } from '../contraflow/circuit-breaker';
import { OnrampRuntime } from '../connectors/_shared/onramp';
import { OfframpRuntime } from '../connectors/_shared/offramp';
import type { EddyEvent } from '../core/event';
import { PipelineRuntime } from '../pipeline/pipeline';
import { processorConfig, processorName } from '../processors/processor';
import type { Registries } from './registries';
import type { Repository } from './repository';
import type { OnrampArtefact, OfframpArtefact, PipelineArtefact } from './artefacts';

export interface InstanceEnv {
  readonly registries: Registries;
  readonly repository: Repository;
  readonly logger: Logger;
  nextUid(): number;
  requestExit(code: number, reason: string): void;
}

const HOST = hostname();

/** An onramp instance: the shared machinery around its type's source, plus the err_required gate. */
export class OnrampInstance {
  readonly runtime: OnrampRuntime;
  /** out events, held back while err_required waits for an err connection */
  readonly out$: Observable<EddyEvent>;
  private readonly errConnected = new BehaviorSubject<boolean>(false);

  constructor(
    readonly url: string,
    readonly artefact: OnrampArtefact,
    env: InstanceEnv,
  ) {
    const type = env.registries.onramps.get(artefact.type);
    const config = env.repository.rampConfig('onramp', artefact);
    const ctx = {
      url,
      uid: env.nextUid(),
      hostname: HOST,
      logger: env.logger,
      breaker: new CircuitBreaker(),
      requestExit: env.requestExit,
    };
    const source = type.create(config, ctx);
    const codec = env.registries.codecs.get(artefact.codec ?? type.defaultCodec, 'codec').create();
    const specs = artefact.preprocessors ?? [];
    this.runtime = new OnrampRuntime({
      ctx,
      source,
      codec,
      preprocessors: () => specs.map((s) => env.registries.preprocessors.get(processorName(s)).create(processorConfig(s))),
    });
    this.out$ = artefact.err_required
      ? this.errConnected.pipe(
          filter(Boolean),
          take(1),
          switchMap(() => this.runtime.out$),
        )
      : this.runtime.out$;
  }

  get err$(): Observable<EddyEvent> {
    return this.runtime.err$;
  }

  noteErrConnected(): void {
    this.errConnected.next(true);
  }
}

export async function createOfframp(url: string, artefact: OfframpArtefact, env: InstanceEnv): Promise<OfframpRuntime> {
  const type = env.registries.offramps.get(artefact.type);
  const config = env.repository.rampConfig('offramp', artefact);
  const codec = env.registries.codecs.get(artefact.codec ?? type.defaultCodec, 'codec').create();
  const postprocessors = (artefact.postprocessors ?? []).map((s) =>
    env.registries.postprocessors.get(processorName(s)).create(processorConfig(s)),
  );
  const concurrency = typeof config.concurrency === 'number' ? config.concurrency : 256;
  const offramp = new OfframpRuntime({
    ctx: { url, uid: env.nextUid(), hostname: HOST, logger: env.logger, requestExit: env.requestExit },
    codec,
    postprocessors,
    autoAck: type.autoAck,
    maxInFlight: concurrency,
    createSink: (ctx) => type.create(config, ctx),
  });
  await offramp.start();
  return offramp;
}

export function createPipeline(url: string, artefact: PipelineArtefact, env: InstanceEnv): PipelineRuntime {
  const withDefaults: PipelineArtefact = {
    ...artefact,
    nodes: artefact.nodes.map((n, i) => ({ ...n, config: env.repository.operatorConfig(n.type, n.config, `nodes[${i}]`) })),
  };
  return new PipelineRuntime(withDefaults, {
    url,
    operators: env.registries.operators,
    scheduler: asyncScheduler,
    logger: env.logger,
    nextUid: env.nextUid,
  });
}
