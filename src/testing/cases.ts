import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { invalid } from '../core/errors';
import { yamlErrorMessage } from '../core/yaml-error';
import { SchemaValidator } from '../schema/artefacts';
import { readYamlFile } from '../config/yaml-file';
import { resolveArtefactPaths } from '../config/paths';
import type { JsonSchema } from '../schema/json-schema';
import type { CodecSpec } from '../codecs/spec';
import type { ProcessorSpec } from '../processors/processor';

/** An insight as a case writes it: `{kind: ack, event: a}`; `event` names a marble letter. */
export interface InsightSpec {
  kind: 'ack' | 'fail' | 'trigger' | 'restore';
  /** the letter of the event it is about (ack, fail) */
  event?: string;
  /** the letters, when it is about several (a fail of a batch) */
  events?: string[];
  /** the delivery time in ms an offramp would report (what `qos::backpressure` reads) */
  time?: number;
}

/** A full event as a case writes it: data and meta, or the member values of an expected batch. */
export interface EventSpec {
  data?: unknown;
  meta?: Record<string, unknown>;
  batch?: unknown[];
}

/** Marbles with the values of their letters (contraflow in, insights out). */
export interface InsightMarbles {
  marbles: string;
  values: Record<string, InsightSpec>;
}

/**
 * One test case: marbles per input port, expected marbles per output port,
 * in the virtual time of an RxJS TestScheduler (one character = 1 ms; `10m`
 * style time progressions allowed). Letters are looked up in `values` (event
 * data) and `events` (data with meta, or batches).
 */
export interface PipelineCase {
  name: string;
  /** the pipeline: an artefact object, a YAML/JSON text, or (in case files) a path */
  pipeline?: unknown;
  /** which pipeline of a config file holding several */
  id?: string;
  values?: Record<string, unknown>;
  events?: Record<string, EventSpec>;
  /** input port → marbles */
  in: Record<string, string>;
  /** output port → expected marbles; ports left out are not checked */
  out: Record<string, string>;
  /** insights sent back into the outputs, as offramps would (acks, fails, circuit-breaker signals) */
  contraflow?: InsightMarbles;
  /** the insights expected to reach the inputs (the sources) */
  insights?: InsightMarbles;
}

/**
 * What a flow case runs bytes through: an onramp's preprocessors and codec,
 * the pipelines, an offramp's codec and postprocessors (json codecs and no
 * processors when absent).
 */
export interface FlowSpec {
  onramp?: { codec?: CodecSpec; preprocessors?: ProcessorSpec[] };
  offramp?: { codec?: CodecSpec; postprocessors?: ProcessorSpec[] };
  /** pipeline ids of the case's config file, chained out -> in; the case's pipeline alone when absent */
  via?: string[];
  /** the bytes read, as text */
  input: string;
  /** the bytes expected to be written, as text */
  output: string;
}

/** A flow case: raw input through ramps and pipelines, the bytes written compared. */
export interface FlowCase {
  name: string;
  /** the pipeline, or the config file `via` names pipelines of: as in `PipelineCase` */
  pipeline?: unknown;
  id?: string;
  flow: FlowSpec;
}

/** A case of a case file: marbles, or a flow. */
export type Case = PipelineCase | FlowCase;

/** A case file: a default pipeline for its cases, and the cases. */
export interface CaseFile {
  /** where it was read from (absent for cases built in code) */
  path?: string;
  pipeline?: unknown;
  id?: string;
  cases: Case[];
}

const marbleMap: JsonSchema = { type: 'object', minProperties: 1, additionalProperties: { type: 'string' } };
const insight: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['kind'],
  properties: {
    kind: { enum: ['ack', 'fail', 'trigger', 'restore'] },
    event: { type: 'string', minLength: 1, maxLength: 1 },
    events: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 1 } },
    time: { type: 'number', minimum: 0 },
  },
};
const insightMarbles: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['marbles'],
  properties: { marbles: { type: 'string' }, values: { type: 'object', additionalProperties: insight, default: {} } },
};
const pipelineRef: JsonSchema = { type: ['string', 'object'] };
const letters = { propertyNames: { minLength: 1, maxLength: 1, pattern: '^[^-|#^()‹›\\s\\d]$' } };

const processors: JsonSchema = {
  type: 'array',
  items: {
    anyOf: [
      { type: 'string', minLength: 1 },
      { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string', minLength: 1 }, config: { type: 'object' } } },
    ],
  },
};
const codec: JsonSchema = processors.items as JsonSchema;
// codec and processor names are looked up when the case runs: the registries an `--require` adds to are known only then
const flow: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['input', 'output'],
  properties: {
    onramp: { type: 'object', additionalProperties: false, properties: { codec, preprocessors: processors } },
    offramp: { type: 'object', additionalProperties: false, properties: { codec, postprocessors: processors } },
    via: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
    input: { type: 'string' },
    output: { type: 'string' },
  },
};

/** The fields of a marble case a flow case has no use for (it gives `flow` instead). */
const MARBLE_FIELDS = ['values', 'events', 'in', 'out', 'contraflow', 'insights'];

const caseSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1 },
    pipeline: pipelineRef,
    id: { type: 'string' },
    values: { type: 'object', ...letters },
    events: {
      type: 'object',
      ...letters,
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: { data: {}, meta: { type: 'object' }, batch: { type: 'array' } },
        not: { required: ['data', 'batch'] },
      },
    },
    in: marbleMap,
    out: marbleMap,
    contraflow: insightMarbles,
    insights: insightMarbles,
    flow,
  },
};

/** The file's own fields; its cases are checked one by one (readCases), so one malformed case does not stop the others. */
const fileSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['cases'],
  properties: { pipeline: pipelineRef, id: { type: 'string' }, cases: { type: 'array', minItems: 1 } },
};

const validator = new SchemaValidator();

/** Checks a case, a marble case or a flow case; throws an `EddyError` naming the field. */
export function checkCase(c: unknown, where = 'case'): asserts c is Case {
  validator.check(caseSchema, c, where);
  const fields = Object.keys(c as object);
  if (fields.includes('flow')) {
    const marble = fields.find((f) => MARBLE_FIELDS.includes(f));
    if (marble) throw invalid(`${where}: ${marble}: a flow case gives flow.input and flow.output, not marbles`);
  } else {
    for (const field of ['in', 'out']) if (!fields.includes(field)) throw invalid(`${where}: missing required field '${field}' (or a flow)`);
  }
}

/** A case of a file as read: checked, or what is wrong with it (the case's name, else `cases[i]`, and the error). */
export type ReadCase = { case: Case } | { name: string; error: string };

/**
 * Reads a case file (YAML or JSON) and checks its own fields, then each case
 * on its own: a malformed case is an entry with its error (naming the file,
 * the case's place and the field), and the other cases stay runnable. A file
 * that cannot be read, or whose own fields are wrong, throws.
 */
export function readCases(path: string): { file: CaseFile; entries: ReadCase[] } {
  const doc = readYamlFile(path);
  try {
    validator.check(fileSchema, doc, '');
  } catch (err) {
    throw invalid(`${path}: ${(err as Error).message.replace(/^: /, '')}`);
  }
  const { cases, ...rest } = doc as { cases: unknown[] };
  const entries = cases.map((c, i): ReadCase => {
    try {
      checkCase(c, `cases[${i}]`);
      return { case: c };
    } catch (err) {
      // named as resolvePipeline names a case, when it has a name to go by
      const name = (c as { name?: unknown } | null)?.name;
      const named = typeof name === 'string' && name !== '';
      return { name: named ? name : `cases[${i}]`, error: `${path}: ${named ? `case '${name}': ` : ''}${(err as Error).message}` };
    }
  });
  const good = entries.flatMap((e) => ('case' in e ? [e.case] : []));
  return { file: { ...rest, path, cases: good }, entries };
}

/** Reads and checks a case file (YAML or JSON), every case included; errors name the file and the field. */
export function readCaseFile(path: string): CaseFile {
  const { file, entries } = readCases(path);
  const bad = entries.find((e) => 'error' in e);
  if (bad && 'error' in bad) throw invalid(bad.error);
  return file;
}

/**
 * The pipeline artefact a case runs: its own `pipeline`, else its file's. A
 * string naming a file (relative to the case file) is read: a pipeline
 * artefact, or a config file whose `pipeline` section is searched for `id`
 * (or holds exactly one). A string with a newline is the artefact's text.
 */
export function resolvePipeline(file: CaseFile, c: { name: string; pipeline?: unknown; id?: string }): unknown {
  const ref = c.pipeline ?? file.pipeline;
  const id = c.id ?? file.id;
  const where = `${file.path ?? 'case'}: case '${c.name}'`;
  if (ref === undefined) throw invalid(`${where}: no pipeline (set 'pipeline' on the case or the file)`);
  let doc: unknown = ref;
  let source = 'inline pipeline';
  if (typeof ref === 'string' && !ref.includes('\n')) {
    source = file.path ? resolve(dirname(file.path), ref) : resolve(ref);
    try {
      doc = readYamlFile(source);
    } catch (err) {
      throw invalid(`${where}: pipeline '${ref}': ${(err as Error).message}`);
    }
  } else if (typeof ref === 'string') {
    try {
      doc = parseYaml(ref);
    } catch (err) {
      throw invalid(`${where}: inline pipeline: not valid YAML or JSON: ${yamlErrorMessage(err, ref)}`);
    }
  }
  const pipeline = pickPipeline(doc, id, `${where}: ${source}`);
  // its relative paths (a lookup table) are its file's, as in a config file
  if (typeof ref === 'string' && !ref.includes('\n')) resolveArtefactPaths('pipeline', pipeline, dirname(source));
  return pipeline;
}

function pickPipeline(doc: unknown, id: string | undefined, where: string): unknown {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw invalid(`${where}: not a pipeline artefact or config file`);
  const section = (doc as { pipeline?: unknown }).pipeline;
  if (section === undefined) {
    const ownId = (doc as { id?: unknown }).id;
    if (id !== undefined && ownId !== id) throw invalid(`${where}: holds pipeline '${String(ownId)}', not '${id}'`);
    return doc;
  }
  if (!Array.isArray(section)) throw invalid(`${where}: the pipeline section must be a list`);
  const ids = section.map((p) => (p as { id?: unknown } | null)?.id);
  if (id === undefined) {
    if (section.length === 1) return section[0];
    throw invalid(`${where}: holds ${section.length} pipelines (${ids.join(', ')}): name one with 'id'`);
  }
  const found: unknown = section.find((p) => (p as { id?: unknown } | null)?.id === id);
  if (found === undefined) throw invalid(`${where}: no pipeline '${id}' (pipelines: ${ids.join(', ')})`);
  return found;
}
