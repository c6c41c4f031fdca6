import { Observable, Subscription, filter, map, type OperatorFunction } from '../core/rx';
import { event, isEvent, type EddyEvent, type Insight, type PortEvent } from '../core/event';
import type { PipelineArtefact } from '../runtime/artefacts';
import { checkPort, standalonePipeline, type StandaloneOptions, type StandalonePipeline } from './standalone';

/** Options of `pipelineOperator` and `pipelinePorts`. */
export interface PipelineOperatorOptions extends StandaloneOptions {
  /** the input port the source feeds; `in` when absent */
  input?: string;
  /**
   * Receives the contraflow that reaches the pipeline's inputs: acks and
   * fails raised by its operators (a WAL acks what it stored), circuit-breaker
   * triggers and restores (a full WAL, a backpressure window).
   */
  onInsight?: (insight: Insight) => void;
}

/**
 * A pipeline artefact as an RxJS operator emitting every output port's
 * events tagged with the port (`out`, `err`, and any other). Each
 * subscription builds its own instance. Values that are not events are
 * wrapped with `event(value)`. When the source completes, the pipeline
 * drains (a batch flushes its partial batch) and the result completes once
 * every linked output has.
 *
 * `In` and `Out` are what the application declares the data of the events
 * going in and coming out to be (see `pipelineOperator`).
 */
export function pipelinePorts<In = unknown, Out = unknown>(
  artefact: PipelineArtefact | string,
  options: PipelineOperatorOptions = {},
): OperatorFunction<In | EddyEvent<In>, PortEvent<Out>> {
  return portsOperator(standalonePipeline(artefact, options), options);
}

/**
 * Each port's events, as the application typed them: eddy checks the artefact, not the data, so the events are
 * passed on as they come and `Out` is the application's word for what its pipeline emits.
 */
function portsOperator<In, Out>(standalone: StandalonePipeline, options: PipelineOperatorOptions): OperatorFunction<In | EddyEvent<In>, PortEvent<Out>> {
  const inputPort = options.input ?? 'in';
  checkPort(standalone, 'input', inputPort);
  return (source) =>
    new Observable<PortEvent<Out>>((subscriber) => {
      const pipeline = standalone.instantiate();
      const subscriptions = new Subscription();
      const linked = pipeline.linkedOutputs();
      let open = linked.length;
      for (const port of linked) {
        subscriptions.add(
          pipeline.output(port).subscribe({
            next: (e) => subscriber.next({ port, event: e as EddyEvent<Out> }),
            error: (err) => subscriber.error(err),
            complete: () => --open === 0 && subscriber.complete(),
          }),
        );
      }
      pipeline.addSource({ url: 'app://eddy', contraflow: (insight) => options.onInsight?.(insight) });
      pipeline.start();
      const input = pipeline.input(inputPort);
      subscriptions.add(
        source.subscribe({
          next: (value) => input.next(isEvent(value) ? value : event(value)),
          error: (err) => subscriber.error(err),
          complete: () => {
            pipeline.drain();
            if (open === 0) subscriber.complete();
          },
        }),
      );
      return () => {
        subscriptions.unsubscribe();
        void pipeline.stop();
      };
    });
}

/**
 * A pipeline artefact as an RxJS operator from input events (or plain
 * values, wrapped) to the events of one output port, `out` by default:
 *
 * ```ts
 * from([{ n: 1 }, { n: 2 }]).pipe(pipelineOperator(yamlText)).subscribe(console.log);
 * ```
 *
 * The artefact is a `PipelineArtefact`, so a misspelt field of a literal
 * does not compile, or its YAML or JSON text. Either is validated when this
 * is called, exactly as publishing it would (an unknown operator type, a
 * config its type refuses, a link to nowhere throw an `EddyError`). A value
 * of type `unknown` (an artefact read at run time) goes through
 * `validatePipeline` first.
 *
 * `In` is the data of the values (or events) the source emits, `Out` the
 * data of the events the pipeline emits: `pipelineOperator<Log, Alert>(p)`
 * fits `Observable<Log>` and yields `EddyEvent<Alert>`. eddy does not check
 * the data against them: they are the application's declaration, in place of
 * a cast. Both are `unknown` when not given.
 *
 * Use `pipelinePorts` to see `err` and the other ports too.
 */
export function pipelineOperator<In = unknown, Out = unknown>(
  artefact: PipelineArtefact | string,
  options: PipelineOperatorOptions & { output?: string } = {},
): OperatorFunction<In | EddyEvent<In>, EddyEvent<Out>> {
  const port = options.output ?? 'out';
  const standalone = standalonePipeline(artefact, options);
  checkPort(standalone, 'output', port);
  const ports = portsOperator<In, Out>(standalone, options);
  return (source) =>
    source.pipe(
      ports,
      filter((pe) => pe.port === port),
      map((pe) => pe.event),
    );
}
