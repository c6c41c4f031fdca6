import type { OfframpRuntime } from '../ramps/offramp';
import type { PipelineRuntime } from '../pipeline/pipeline';
import type { OnrampInstance } from './instances';
import type { Artefact, BindingArtefact } from './artefacts';
import type { Kind } from './urls';

/** A running instance's live object, by kind. */
export type Live =
  | { kind: 'onramp'; onramp: OnrampInstance }
  | { kind: 'offramp'; offramp: OfframpRuntime }
  | { kind: 'pipeline'; pipeline: PipelineRuntime }
  | { kind: 'binding'; binding: BindingInstance };

export interface InstanceRecord {
  readonly url: string;
  readonly kind: Kind;
  readonly artefactId: string;
  readonly instanceId: string;
  readonly live: Live;
  /** who keeps it alive: binding instance URLs, 'direct' (activated by itself) or 'system' */
  readonly users: Set<string>;
  /** what GET and DELETE of the instance return */
  readonly data: Artefact;
}

/** A running binding: its links resolved for its instance, and how to undo them. */
export interface BindingInstance {
  readonly resolved: BindingArtefact;
  /** the values it was activated with (its mapping's) */
  readonly params: Record<string, string>;
  /** undoes the links from onramps (the sources) */
  readonly sourceDisconnects: (() => void)[];
  /** undoes every other link */
  readonly disconnects: (() => void)[];
  /** the instance URLs it keeps alive */
  readonly uses: Set<string>;
}

/** The running instances by URL (`/kind/artefact/instance`): what activation fills and everything else reads. */
export class LiveInstances {
  private readonly records = new Map<string, InstanceRecord>();

  get(url: string): InstanceRecord | undefined {
    return this.records.get(url);
  }

  has(url: string): boolean {
    return this.records.has(url);
  }

  add(record: InstanceRecord): void {
    this.records.set(record.url, record);
  }

  delete(url: string): void {
    this.records.delete(url);
  }

  clear(): void {
    this.records.clear();
  }

  all(): InstanceRecord[] {
    return [...this.records.values()];
  }

  /** The instance ids of the artefact's running instances. */
  instancesOf(kind: Kind, artefactId: string): string[] {
    return this.all()
      .filter((r) => r.kind === kind && r.artefactId === artefactId)
      .map((r) => r.instanceId);
  }

  onramp(url: string): OnrampInstance | undefined {
    const live = this.records.get(url)?.live;
    return live?.kind === 'onramp' ? live.onramp : undefined;
  }

  pipeline(url: string): PipelineRuntime | undefined {
    const live = this.records.get(url)?.live;
    return live?.kind === 'pipeline' ? live.pipeline : undefined;
  }

  offramp(url: string): OfframpRuntime | undefined {
    const live = this.records.get(url)?.live;
    return live?.kind === 'offramp' ? live.offramp : undefined;
  }
}
