import { TestScheduler } from 'rxjs/testing';
import { invalid } from '../core/errors';
import { batchValues, event as makeEvent, type EddyEvent } from '../core/event';
import type { Codec } from '../codecs/codec';
import { codecConfig, codecName, type CodecSpec } from '../codecs/spec';
import { processorConfig, processorName, runProcessors, type Postprocessor, type Preprocessor, type ProcessorSpec } from '../processors/processor';
import { SchemaValidator } from '../schema/artefacts';
import { checkPort, standalonePipeline } from '../embed/standalone';
import type { Registries } from '../runtime/registries';
import type { JsonSchema } from '../schema/json-schema';
import type { FlowCase } from './cases';
import { virtualTimeRegistries, type CaseResult, type RunOptions } from './run';

const validator = new SchemaValidator();

/**
 * Runs a flow case: `flow.input` as one chunk through the onramp's
 * preprocessors (then their ends, as at the end of a file), each frame
 * decoded by its codec into an event, the events through the pipelines
 * (out -> in) in virtual time, each event out of the last one encoded by the
 * offramp's codec (a batch member by member) and run through its
 * postprocessors, whose ends are flushed when the pipelines have drained.
 * The bytes written are compared with `flow.output`.
 */
export function runFlowCase(c: FlowCase, artefacts: unknown[], options: RunOptions = {}): CaseResult {
  const registries = virtualTimeRegistries(options.registries);
  const { onramp = {}, offramp = {}, input, output } = c.flow;
  const decoder = makeCodec(registries, onramp.codec, 'flow.onramp.codec');
  const encoder = makeCodec(registries, offramp.codec, 'flow.offramp.codec');
  const pre: Preprocessor[] = makeProcessors(registries.preprocessors, onramp.preprocessors, 'flow.onramp.preprocessors');
  const post: Postprocessor[] = makeProcessors(registries.postprocessors, offramp.postprocessors, 'flow.offramp.postprocessors');
  const scheduler = new TestScheduler(() => undefined);
  const pipelines = artefacts.map((artefact) => standalonePipeline(artefact, { registries, scheduler }));
  for (const p of pipelines) {
    checkPort(p, 'input', 'in');
    checkPort(p, 'output', 'out');
  }
  const written: Buffer[] = [];
  // an error thrown in a subscriber would be reported later, outside the case: it is kept, and thrown once the run is over
  let failure: Error | undefined;
  const write = (e: EddyEvent) => {
    for (const value of e.isBatch ? batchValues(e.data) : [e.data]) {
      try {
        written.push(...runProcessors(post, [encoder.encode(value)], { ingestNs: e.ingestNs }));
      } catch (err) {
        failure ??= invalid(`flow.offramp: ${JSON.stringify(value)} cannot be written: ${(err as Error).message}`);
      }
    }
  };

  scheduler.run(() => {
    const instances = pipelines.map((p) => p.instantiate());
    instances.forEach((instance, i) => {
      const next = instances.at(i + 1);
      instance.addSource({ url: 'eddy-test://source', contraflow: () => undefined });
      instance.output('out').subscribe({
        next: (e) => (next ? next.input('in').next(e) : write(e)),
        complete: () => next?.drain(),
      });
    });
    for (const instance of instances) instance.start();
    const ctx = { ingestNs: 0n };
    let frames: Buffer[];
    try {
      frames = runProcessors(pre, [Buffer.from(input)], ctx, true);
    } catch (err) {
      throw invalid(`flow.onramp.preprocessors: ${(err as Error).message}`);
    }
    let seq = 0;
    for (const [i, frame] of frames.entries()) {
      let value: unknown;
      try {
        value = decoder.decode(frame, ctx.ingestNs);
      } catch (err) {
        throw invalid(`flow.input: frame ${i + 1} ${JSON.stringify(frame.toString())}: the ${decoder.name} codec cannot decode it: ${(err as Error).message}`);
      }
      // a frame that holds no value (a comment line) makes no event, as in an onramp
      if (value === undefined) continue;
      instances[0].input('in').next(makeEvent(value, {}, { id: { uid: 0, seq: ++seq }, ingestNs: ctx.ingestNs, originUri: 'eddy-test://case/in' }));
    }
    instances[0].drain();
  });
  if (failure) throw failure;
  // every pipeline has drained: what the postprocessors still hold is written, as when an offramp stops
  written.push(...runProcessors(post, [], { ingestNs: 0n }, true));

  const actual = Buffer.concat(written);
  const expected = Buffer.from(output);
  const firstDifference = firstDifferingByte(expected, actual);
  return {
    name: c.name,
    passed: firstDifference === -1,
    ports: [],
    bytes: { expected: output, actual: actual.toString(), firstDifference },
  };
}

/** The offset of the first byte where the two differ (the shorter one's length when one is a prefix of the other), or -1. */
function firstDifferingByte(a: Buffer, b: Buffer): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : length;
}

/** A ramp's codec as a ramp makes it (json when absent), its config checked against the codec's schema. */
function makeCodec(registries: Registries, spec: CodecSpec = 'json', where: string): Codec {
  const type = registries.codecs.get(codecName(spec), where);
  let config = codecConfig(spec);
  if (config !== undefined) {
    if (!type.configSchema) throw invalid(`${where}.config: the ${type.name} codec takes no config`);
    config = structuredClone(config);
    validator.check(type.configSchema, config, `${where}.config`);
  }
  const codec = type.create(config);
  // a registry codec fetches its schemas when its ramp starts (a promise): a case runs synchronously, in virtual time
  if (codec.open) throw invalid(`${where}: the ${type.name} codec fetches what it needs when its ramp starts, which a flow case cannot wait for`);
  return codec;
}

/** A ramp's processors, each config checked against its type's schema, in a fresh chain. */
function makeProcessors<P>(
  registry: { get(name: string, field: string): { configSchema: JsonSchema; create(config: Record<string, unknown>): P } },
  specs: ProcessorSpec[] = [],
  where: string,
): P[] {
  return specs.map((spec, i) => {
    const type = registry.get(processorName(spec), `${where}[${i}]`);
    // a copy: the validator fills in defaults, and create reads the config as written, as a ramp does
    validator.check(type.configSchema, structuredClone(processorConfig(spec)), `${where}[${i}].config`);
    return type.create(processorConfig(spec));
  });
}
