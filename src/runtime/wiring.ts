import { invalid } from '../core/errors';
import { buildGraph } from '../pipeline/graph';
import type { PipelineRuntime } from '../pipeline/pipeline';
import type { Artefact, BindingArtefact, StoredPipeline } from './artefacts';
import type { LiveInstances } from './live';
import { SharedLinks } from './shared-links';
import { type InstancePort, instanceUrl, parseLinkUrl, substitute } from './urls';

/** One link of a binding, resolved for an instance: the URLs as written (placeholders filled in) and the ports they name. */
export interface ResolvedLink {
  src: { raw: string; at: InstancePort };
  dsts: { raw: string; at: InstancePort }[];
}

/** The binding's links with every `{name}` replaced by the instance's parameters, each end parsed. */
export function resolveLinks(binding: BindingArtefact, params: Record<string, string>): ResolvedLink[] {
  const where = `binding ${binding.id}: links`;
  const end = (raw: string, side: 'source' | 'destination') => {
    const url = substitute(raw, params, where);
    return { raw: url, at: parseLinkUrl(url, side, where) };
  };
  return Object.entries(binding.links).map(([src, dsts]) => ({ src: end(src, 'source'), dsts: dsts.map((d) => end(d, 'destination')) }));
}

/** The interface ports of a pipeline: what a link may name at its inputs and outputs. */
export interface PipelinePorts {
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
}

/**
 * Checks every link of a binding before anything opens: each end names a
 * published artefact, the kinds may be linked, and each port exists on its
 * end (a pipeline's from its interface, read from the artefact). The same
 * check runs again when a link is wired, on the live instances; here it
 * makes activation all-or-nothing before any side effect: a binding naming
 * a port that does not exist is refused before a file is truncated or a
 * port is bound (docs/concepts.md#activation).
 */
export function checkLinks(links: readonly ResolvedLink[], artefact: (kind: InstancePort['kind'], id: string) => Artefact): void {
  const ports = new Map<string, PipelinePorts>();
  const pipelinePorts = (at: InstancePort): PipelinePorts => {
    let known = ports.get(at.artefact);
    if (!known) ports.set(at.artefact, (known = buildGraph(artefact('pipeline', at.artefact) as StoredPipeline)));
    return known;
  };
  for (const { src, dsts } of links) {
    artefact(src.at.kind, src.at.artefact);
    for (const dst of dsts) {
      artefact(dst.at.kind, dst.at.artefact);
      checkLink(src.at, dst.at, pipelinePorts);
    }
  }
}

/** The ports of a ramp as a pipeline's links see them (an offramp's outputs, err and replies, are made when first linked). */
export const RAMP_PORTS: Readonly<Record<'onramp' | 'offramp', { readonly inputs: string[]; readonly outputs: string[] }>> = {
  onramp: { inputs: [], outputs: ['out', 'err'] },
  offramp: { inputs: ['in'], outputs: [] },
};

/** Throws the 400 that says why `src -> dst` cannot be wired: kinds that do not link, or a port its end does not have. */
function checkLink(src: InstancePort, dst: InstancePort, pipelinePorts: (at: InstancePort) => PipelinePorts): void {
  const where = `link ${linkKey(src, dst)}`;
  const input = (at: InstancePort) => {
    const { inputs } = pipelinePorts(at);
    if (!inputs.includes(at.port)) throw invalid(`${where}: pipeline has no input '${at.port}' (inputs: ${inputs.join(', ')})`);
  };
  const output = (at: InstancePort) => {
    const { outputs } = pipelinePorts(at);
    if (!outputs.includes(at.port)) throw invalid(`${where}: pipeline has no output '${at.port}' (outputs: ${outputs.join(', ')})`);
  };
  const pair = `${src.kind}>${dst.kind}`;
  if (pair === 'onramp>pipeline') {
    if (!RAMP_PORTS.onramp.outputs.includes(src.port)) throw invalid(`${where}: an onramp has ports ${RAMP_PORTS.onramp.outputs.join(' and ')}`);
    input(dst);
  } else if (pair === 'pipeline>offramp') {
    if (!RAMP_PORTS.offramp.inputs.includes(dst.port)) throw invalid(`${where}: an offramp receives on port ${RAMP_PORTS.offramp.inputs.join(', ')}`);
    output(src);
  } else if (pair === 'pipeline>pipeline') {
    output(src);
    input(dst);
  } else if (pair === 'pipeline>onramp') {
    output(src);
  } else if (pair === 'offramp>pipeline') {
    // an offramp's output ports (err, a linked offramp's replies) are made when first linked
    input(dst);
  } else {
    throw invalid(
      `${where}: ${article(src.kind)} cannot be linked to ${article(dst.kind)}: a pipeline goes between them (system::passthrough passes events on unchanged)`,
    );
  }
}

/**
 * Connects the ports of running instances: an onramp's out or err to a
 * pipeline input, a pipeline output to an offramp, another pipeline or an
 * onramp (replies), an offramp's output to a pipeline. Every link is wired
 * once however many bindings declare it (see `SharedLinks`).
 */
export class LinkWiring {
  /** every wired link once, counted by the bindings that declare it */
  private readonly links = new SharedLinks();

  constructor(private readonly instances: LiveInstances) {}

  /**
   * Holds one use of a link, wiring it if no binding holds it yet, and
   * returns how to release that use: a link two bindings declare is one
   * connection (wired twice, every event on it went out twice).
   */
  connect(src: InstancePort, dst: InstancePort): () => void {
    return this.links.hold(linkKey(src, dst), () => this.wire(src, dst));
  }

  /**
   * Wires a held link again between the instances its URLs name now (a
   * pipeline swapped in place: the new instance under the old URL), the new
   * connection before the old one is undone (`SharedLinks.rewire`).
   */
  rewire(src: InstancePort, dst: InstancePort): void {
    this.links.rewire(linkKey(src, dst), () => this.wire(src, dst));
  }

  /** How many bindings hold the link (0 when it is not wired). */
  uses(src: InstancePort, dst: InstancePort): number {
    return this.links.uses(linkKey(src, dst));
  }

  /** Wires one link and returns how to undo it. */
  private wire(src: InstancePort, dst: InstancePort): () => void {
    const liveAt = (at: InstancePort) => {
      const url = instanceUrl(at.kind, at.artefact, at.instance);
      const record = this.instances.get(url);
      if (!record) throw new Error(`cannot wire a link at ${url}: it is not running`);
      return record.live;
    };
    const from = liveAt(src);
    const to = liveAt(dst);
    checkLink(src, dst, (at) => {
      const live = (at === src ? from : to) as { kind: 'pipeline'; pipeline: PipelineRuntime };
      return { inputs: [...live.pipeline.inputs.keys()], outputs: [...live.pipeline.outputs.keys()] };
    });
    if (from.kind === 'onramp' && to.kind === 'pipeline') {
      const input = to.pipeline.input(dst.port);
      const stream = src.port === 'out' ? from.onramp.out$ : from.onramp.err$;
      to.pipeline.addSource(from.onramp.runtime);
      if (src.port === 'err') from.onramp.noteErrConnected();
      const sub = stream.subscribe(input);
      // partitions a rebalance took away: the pipeline's stateful nodes drop their state of them
      if (src.port === 'out') sub.add(from.onramp.runtime.partitionsReleased$.subscribe((parts) => to.pipeline.releasePartitions(parts)));
      // while it reads nothing, the silence of its partitions is not counted (window::aggregate idle_timeout)
      const source = from.onramp.runtime.url;
      if (src.port === 'out') sub.add(from.onramp.runtime.reading$.subscribe((reading) => to.pipeline.sourceReading(source, reading)));
      return () => {
        sub.unsubscribe();
        if (src.port === 'out') to.pipeline.sourceReading(source, true);
        to.pipeline.removeSource(from.onramp.runtime);
      };
    }
    if (from.kind === 'pipeline' && to.kind === 'offramp') {
      const output = from.pipeline.output(src.port);
      const sub = output.subscribe(to.offramp.connect(from.pipeline));
      return () => {
        sub.unsubscribe();
        to.offramp.disconnect(from.pipeline);
      };
    }
    if (from.kind === 'pipeline' && to.kind === 'pipeline') {
      const output = from.pipeline.output(src.port);
      const sub = output.subscribe(to.pipeline.input(dst.port));
      sub.add(from.pipeline.partitionsReleased$.subscribe((parts) => to.pipeline.releasePartitions(parts)));
      sub.add(from.pipeline.sourceReading$.subscribe(({ source, reading }) => to.pipeline.sourceReading(source, reading)));
      to.pipeline.addSource(from.pipeline);
      return () => {
        sub.unsubscribe();
        to.pipeline.removeSource(from.pipeline);
      };
    }
    if (from.kind === 'pipeline' && to.kind === 'onramp') {
      const output = from.pipeline.output(src.port);
      const sub = output.subscribe((event) => to.onramp.runtime.reply(event));
      return () => sub.unsubscribe();
    }
    if (from.kind === 'offramp' && to.kind === 'pipeline') {
      const sub = from.offramp.output(src.port).subscribe(to.pipeline.input(dst.port));
      // the pipeline's acks and fails come back to the offramp: a dead letter's settle its source (dead-letters.ts)
      to.pipeline.addSource(from.offramp);
      return () => {
        sub.unsubscribe();
        to.pipeline.removeSource(from.offramp);
      };
    }
    throw new Error(`${linkKey(src, dst)}: checkLink let an unknown pair through`);
  }
}

/** `/kind/artefact/instance/port -> /kind/artefact/instance/port`: names a link in messages and in `SharedLinks`. */
function linkKey(src: InstancePort, dst: InstancePort): string {
  return `${instanceUrl(src.kind, src.artefact, src.instance)}/${src.port} -> ${instanceUrl(dst.kind, dst.artefact, dst.instance)}/${dst.port}`;
}

/** `an onramp`, `a pipeline`: for messages. */
function article(kind: string): string {
  return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}
