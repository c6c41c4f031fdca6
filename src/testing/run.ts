import { isDeepStrictEqual } from 'node:util';
import { TestScheduler } from 'rxjs/testing';
import { invalid, present } from '../core/errors';
import { batchValues, event as makeEvent, trackedIds, type EddyEvent, type EventId, type Insight } from '../core/event';
import { checkWalConfig, walNode, type WalConfig } from '../pipeline/operators/wal';
import type { OperatorType } from '../pipeline/operator';
import { MemoryWalStorage } from '../pipeline/operators/wal/storage';
import { wal } from '../pipeline/operators/wal';
import { checkPort, standalonePipeline } from '../embed/standalone';
import { Registries } from '../runtime/registries';
import type { EventSpec, InsightSpec, PipelineCase } from './cases';
import { parseDiagram, type MarbleMessage } from './marbles';

/** One notification as the comparison sees it: a frame, and the value's comparable view. */
export interface Frame {
  frame: number;
  kind: 'N' | 'C' | 'E';
  /** the view compared: `{data}` or `{batch}` (plus `meta` when the expected value states it); an insight's `{kind, event}` */
  value?: unknown;
  /** the marble letter it matched, if any */
  letter?: string;
}

export interface PortResult {
  /** an output port, or `insights` */
  port: string;
  expected: Frame[];
  actual: Frame[];
  /** index of the first frame that differs, or -1 */
  firstDifference: number;
}

/** A flow case's bytes: what was expected and what the offramp wrote, as text, and the first byte where they differ (-1: none). */
export interface BytesResult {
  expected: string;
  actual: string;
  firstDifference: number;
}

export interface CaseResult {
  name: string;
  passed: boolean;
  ports: PortResult[];
  /** a flow case's written bytes */
  bytes?: BytesResult;
  /** an error that stopped the case (a bad pipeline, an unknown letter) */
  error?: string;
  /** the case's letters and the views they stand for, to name values in reports */
  letters?: Record<string, unknown>;
}

export interface RunOptions {
  /** operator types, with the application's own registered; the built-in ones when absent */
  registries?: Registries;
}

interface Expected {
  view: Record<string, unknown>;
  keys: string[];
  letter: string;
}

/**
 * Runs one case in virtual time: the pipeline is built on a TestScheduler,
 * inputs are cold observables of events made from the letters (id uid 0,
 * seq in emission order, ingest time = the virtual time, transactional), and
 * when every input has completed the pipeline drains, as on shutdown.
 */
export function runCase(c: PipelineCase, artefact: unknown, options: RunOptions = {}): CaseResult {
  const ports: PortResult[] = [];
  try {
    const scheduler = new TestScheduler(() => undefined);
    const pipeline = standalonePipeline(artefact, { registries: virtualTimeRegistries(options.registries), scheduler });
    for (const port of Object.keys(c.in)) checkPort(pipeline, 'input', port);
    for (const port of Object.keys(c.out)) checkPort(pipeline, 'output', port);
    const letters = letterTable(c);
    const expectedOf = (marbles: string, what: string) => parseDiagram(marbles, lookup(letters, what)).map((m) => toFrame(m));
    const expectedOut = new Map<string, Frame[]>();
    let expectedInsights: Frame[] = [];

    const actual = new Map<string, Frame[]>(Object.keys(c.out).map((port) => [port, []]));
    const insightsSeen: Frame[] = [];
    const inputIds = new Map<string, string>(); // `uid:seq` of an input event → its letter
    const lastMatching = new Map<string, EddyEvent>(); // letter → the last output event matching it

    scheduler.run(({ cold }) => {
      for (const [port, marbles] of Object.entries(c.out)) expectedOut.set(port, expectedOf(marbles, `out.${port}`));
      if (c.insights) {
        const specs = Object.entries(c.insights.values).map(([letter, spec]): [string, Expected] => [letter, { view: insightView(spec), keys: [], letter }]);
        expectedInsights = parseDiagram(c.insights.marbles, lookup(new Map(specs), 'insights')).map(toFrame);
      }
      const instance = pipeline.instantiate();
      instance.addSource({ url: 'eddy-test://source', contraflow: (i) => insightsSeen.push(insightFrame(scheduler.now(), i, inputIds)) });
      for (const [port, frames] of actual) {
        instance.output(port).subscribe({
          next: (e) => {
            for (const [letter, spec] of letters) if (matches(e, spec)) lastMatching.set(letter, e);
            frames.push({ frame: scheduler.now(), kind: 'N', value: e });
          },
          complete: () => frames.push({ frame: scheduler.now(), kind: 'C' }),
          error: (err) => frames.push({ frame: scheduler.now(), kind: 'E', value: String(err) }),
        });
      }
      instance.start();
      let seq = 0;
      let openInputs = Object.keys(c.in).length;
      for (const [port, marbles] of Object.entries(c.in)) {
        const input = instance.input(port);
        const value = lookup(letters, `in.${port}`);
        cold(marbles).subscribe({
          next: (letter) => {
            const spec = value[letter];
            if (spec.keys.includes('batch')) throw invalid(`input ${port}: '${letter}' is a batch; inputs are plain events`);
            const e = makeEvent(spec.view.data, (spec.view.meta as Record<string, unknown> | undefined) ?? {}, {
              id: { uid: 0, seq: ++seq },
              ingestNs: BigInt(scheduler.now()) * 1_000_000n,
              originUri: `eddy-test://case/${port}`,
              transactional: true,
            });
            inputIds.set(idKey(e.id), letter);
            input.next(e);
          },
          complete: () => --openInputs === 0 && instance.drain(),
        });
      }
      if (c.contraflow) {
        const values = lookup(new Map(Object.entries(c.contraflow.values)), 'contraflow');
        cold(c.contraflow.marbles, values).subscribe((spec) => instance.contraflow(toInsight(spec, lastMatching)));
      }
    });

    // actual has a list for every port of c.out, as expectedOut does
    for (const [port, expected] of expectedOut) ports.push(compare(port, expected, present(actual.get(port), `port ${port}`)));
    if (c.insights) ports.push(compare('insights', expectedInsights, insightsSeen));
    const named = Object.fromEntries([...letters].map(([letter, e]) => [letter, e.view]));
    return { name: c.name, passed: ports.every((p) => p.firstDifference === -1), ports, letters: named };
  } catch (err) {
    return { name: c.name, passed: false, ports, error: (err as Error).message };
  }
}

/** Every letter of the case as its expected view: `values` are data, `events` data+meta or a batch. */
function letterTable(c: PipelineCase): Map<string, Expected> {
  const table = new Map<string, Expected>();
  for (const [letter, data] of Object.entries(c.values ?? {})) table.set(letter, { view: { data }, keys: ['data'], letter });
  for (const [letter, spec] of Object.entries(c.events ?? {})) {
    if (table.has(letter)) throw invalid(`events.${letter}: '${letter}' is also in values`);
    table.set(letter, eventView(spec, letter));
  }
  return table;
}

function eventView(spec: EventSpec, letter: string): Expected {
  const view: Record<string, unknown> = spec.batch !== undefined ? { batch: spec.batch } : { data: spec.data ?? null };
  if (spec.meta !== undefined) view.meta = spec.meta;
  return { view, keys: Object.keys(view), letter };
}

/** A value map for marbles that names the marbles and the letter when a letter has no value. */
function lookup<T>(letters: Map<string, T>, what: string): Record<string, T> {
  return new Proxy(
    {},
    {
      get: (_t, letter: string) => {
        const found = letters.get(letter);
        if (!found) throw invalid(`${what}: no value for '${letter}' (letters: ${[...letters.keys()].join(', ') || 'none'})`);
        return found;
      },
    },
  );
}

function toFrame(m: MarbleMessage): Frame {
  const n = m.notification as { kind: 'N' | 'C' | 'E'; value?: unknown };
  if (n.kind !== 'N') return { frame: m.frame, kind: n.kind };
  return { frame: m.frame, kind: 'N', value: n.value };
}

/** The view of an actual event, projected on the keys the expected value states. */
export function viewOf(e: EddyEvent, keys: readonly string[]): Record<string, unknown> {
  const view: Record<string, unknown> = e.isBatch ? { batch: batchValues(e.data) } : { data: e.data };
  if (keys.includes('meta')) view.meta = e.meta;
  return view;
}

function matches(e: EddyEvent, expected: Expected): boolean {
  return isDeepStrictEqual(viewOf(e, expected.keys), expected.view);
}

/**
 * Compares frame by frame. Expected values carry their view and keys; actual
 * events are projected on the keys of the expected frame at the same place.
 */
function compare(port: string, expectedRaw: Frame[], actualRaw: Frame[]): PortResult {
  const expected: Frame[] = expectedRaw.map((f) => (f.kind === 'N' ? { ...f, value: (f.value as Expected).view, letter: (f.value as Expected).letter } : f));
  const keysAt = (i: number) => (expectedRaw[i]?.value as Expected | undefined)?.keys ?? ['data'];
  const actual: Frame[] = actualRaw.map((f, i) => (f.kind === 'N' && isEddyEvent(f.value) ? { ...f, value: viewOf(f.value, keysAt(i)) } : f));
  let firstDifference = -1;
  const length = Math.max(expected.length, actual.length);
  for (let i = 0; i < length; i++) {
    // one list may be the shorter
    const e = expected[i] as Frame | undefined;
    const a = actual[i] as Frame | undefined;
    if (!e || e.frame !== a?.frame || e.kind !== a.kind || !isDeepStrictEqual(e.value, a.value)) {
      firstDifference = i;
      break;
    }
  }
  return { port, expected, actual, firstDifference };
}

function isEddyEvent(v: unknown): v is EddyEvent {
  return typeof v === 'object' && v !== null && 'ingestNs' in v;
}

const idKey = (id: EventId) => `${id.uid}:${id.seq}`;

/** An insight that reached the sources, as `{kind, event}` with the input letters it is about. */
function insightFrame(frame: number, insight: Insight, inputIds: Map<string, string>): Frame {
  const about = insight.event ? trackedIds(insight.event).map((id) => inputIds.get(idKey(id)) ?? idKey(id)) : [];
  return {
    frame,
    kind: 'N',
    value: insightView({ kind: insight.kind, ...(about.length === 1 ? { event: about[0] } : {}), ...(about.length > 1 ? { events: about } : {}) }),
  };
}

function insightView(spec: InsightSpec): Record<string, unknown> {
  const view: Record<string, unknown> = { kind: spec.kind };
  if (spec.event !== undefined) view.event = spec.event;
  if (spec.events !== undefined) view.events = spec.events;
  return view;
}

/** Contraflow from a case: `event` names the last output event that matched that letter. */
function toInsight(spec: InsightSpec, lastMatching: Map<string, EddyEvent>): Insight {
  const insight: Insight = { kind: spec.kind, from: 'eddy-test://sink', meta: spec.time !== undefined ? { time: spec.time } : {} };
  if (spec.event !== undefined) {
    const e = lastMatching.get(spec.event);
    if (!e) throw invalid(`contraflow: no output event has matched '${spec.event}' yet`);
    insight.event = e;
  }
  return insight;
}

/**
 * The registries a case runs with: the WAL keeps its log in memory, since
 * virtual time cannot wait for a disk; everything else as given.
 */
export function virtualTimeRegistries(base: Registries = Registries.withBuiltins()): Registries {
  const r = new Registries();
  // lazily: a type's module (and the optional package it may need, core/packages.ts) loads only when a case names it
  const copy = <T>(from: { names(): string[]; get(n: string): T }, to: { registerLazy(n: string, load: () => T): void }) => {
    for (const name of from.names()) to.registerLazy(name, () => from.get(name));
  };
  copy(base.codecs, r.codecs);
  copy(base.preprocessors, r.preprocessors);
  copy(base.postprocessors, r.postprocessors);
  copy(base.onramps, r.onramps);
  copy(base.offramps, r.offramps);
  const memoryWal: OperatorType<WalConfig> = { ...wal, validate: checkWalConfig, create: (config, ctx) => walNode(config, ctx, new MemoryWalStorage()) };
  for (const name of base.operators.names()) {
    r.operators.registerLazy(name, () => {
      const type = base.operators.get(name);
      return type === wal ? memoryWal : type;
    });
  }
  return r;
}
