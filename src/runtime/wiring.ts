import { invalid } from '../core/errors';
import type { PipelineRuntime } from '../pipeline/pipeline';
import type { BindingArtefact } from './artefacts';
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

  /** How many bindings hold the link (0 when it is not wired). */
  uses(src: InstancePort, dst: InstancePort): number {
    return this.links.uses(linkKey(src, dst));
  }

  /** Wires one link and returns how to undo it. */
  private wire(src: InstancePort, dst: InstancePort): () => void {
    const where = `link ${linkKey(src, dst)}`;
    const from = this.instances.get(instanceUrl(src.kind, src.artefact, src.instance))!.live;
    const to = this.instances.get(instanceUrl(dst.kind, dst.artefact, dst.instance))!.live;
    if (from.kind === 'onramp' && to.kind === 'pipeline') {
      if (src.port !== 'out' && src.port !== 'err') throw invalid(`${where}: an onramp has ports out and err`);
      const input = pipelineInput(to.pipeline, dst.port, where);
      const stream = src.port === 'out' ? from.onramp.out$ : from.onramp.err$;
      to.pipeline.addSource(from.onramp.runtime);
      if (src.port === 'err') from.onramp.noteErrConnected();
      const sub = stream.subscribe(input);
      return () => {
        sub.unsubscribe();
        to.pipeline.removeSource(from.onramp.runtime);
      };
    }
    if (from.kind === 'pipeline' && to.kind === 'offramp') {
      if (dst.port !== 'in') throw invalid(`${where}: an offramp receives on port in`);
      const output = pipelineOutput(from.pipeline, src.port, where);
      const sub = output.subscribe(to.offramp.connect(from.pipeline));
      return () => {
        sub.unsubscribe();
        to.offramp.disconnect(from.pipeline);
      };
    }
    if (from.kind === 'pipeline' && to.kind === 'pipeline') {
      const output = pipelineOutput(from.pipeline, src.port, where);
      const sub = output.subscribe(pipelineInput(to.pipeline, dst.port, where));
      to.pipeline.addSource(from.pipeline);
      return () => {
        sub.unsubscribe();
        to.pipeline.removeSource(from.pipeline);
      };
    }
    if (from.kind === 'pipeline' && to.kind === 'onramp') {
      const output = pipelineOutput(from.pipeline, src.port, where);
      const sub = output.subscribe((event) => to.onramp.runtime.reply(event));
      return () => sub.unsubscribe();
    }
    if (from.kind === 'offramp' && to.kind === 'pipeline') {
      const sub = from.offramp.output(src.port).subscribe(pipelineInput(to.pipeline, dst.port, where));
      // the pipeline's acks and fails come back to the offramp: a dead letter's settle its source (dead-letters.ts)
      to.pipeline.addSource(from.offramp);
      return () => {
        sub.unsubscribe();
        to.pipeline.removeSource(from.offramp);
      };
    }
    throw invalid(
      `${where}: ${article(src.kind)} cannot be linked to ${article(dst.kind)}: a pipeline goes between them (system::passthrough passes events on unchanged)`,
    );
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

function pipelineInput(p: PipelineRuntime, port: string, where: string) {
  if (!p.inputs.has(port)) throw invalid(`${where}: pipeline has no input '${port}' (inputs: ${[...p.inputs.keys()].join(', ')})`);
  return p.input(port);
}

function pipelineOutput(p: PipelineRuntime, port: string, where: string) {
  if (!p.outputs.has(port)) throw invalid(`${where}: pipeline has no output '${port}' (outputs: ${[...p.outputs.keys()].join(', ')})`);
  return p.output(port);
}
