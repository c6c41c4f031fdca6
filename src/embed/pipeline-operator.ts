import { Observable, Subscription, filter, map, type OperatorFunction } from '../core/rx';
import { event, isEvent, type EddyEvent, type Insight, type PortEvent } from '../core/event';
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
 */
export function pipelinePorts(artefact: unknown, options: PipelineOperatorOptions = {}): OperatorFunction<unknown, PortEvent> {
  return portsOperator(standalonePipeline(artefact, options), options);
}

function portsOperator(standalone: StandalonePipeline, options: PipelineOperatorOptions): OperatorFunction<unknown, PortEvent> {
  const inputPort = options.input ?? 'in';
  checkPort(standalone, 'input', inputPort);
  return (source) =>
    new Observable<PortEvent>((subscriber) => {
      const pipeline = standalone.instantiate();
      const subscriptions = new Subscription();
      const linked = pipeline.linkedOutputs();
      let open = linked.length;
      for (const port of linked) {
        subscriptions.add(
          pipeline.output(port).subscribe({
            next: (e) => subscriber.next({ port, event: e }),
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
 * Use `pipelinePorts` to see `err` and the other ports too.
 */
export function pipelineOperator(artefact: unknown, options: PipelineOperatorOptions & { output?: string } = {}): OperatorFunction<unknown, EddyEvent> {
  const port = options.output ?? 'out';
  const standalone = standalonePipeline(artefact, options);
  checkPort(standalone, 'output', port);
  const ports = portsOperator(standalone, options);
  return (source) =>
    source.pipe(
      ports,
      filter((pe) => pe.port === port),
      map((pe) => pe.event),
    );
}
