import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { invalid } from '../core/errors';
import { yamlErrorMessage } from '../core/yaml-error';
import { SchemaValidator } from '../schema/artefacts';
import { readYamlFile } from '../config/yaml-file';
import { resolveArtefactPaths } from '../config/paths';
import type { JsonSchema } from '../schema/json-schema';

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

/** A case file: a default pipeline for its cases, and the cases. */
export interface CaseFile {
  /** where it was read from (absent for cases built in code) */
  path?: string;
  pipeline?: unknown;
  id?: string;
  cases: PipelineCase[];
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
const letters = { propertyNames: { minLength: 1, maxLength: 1, pattern: '^[^-|#^()\\s\\d]$' } };

const caseSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'in', 'out'],
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
  },
};

const fileSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['cases'],
  properties: { pipeline: pipelineRef, id: { type: 'string' }, cases: { type: 'array', minItems: 1, items: caseSchema } },
};

const validator = new SchemaValidator();

/** Checks a case built in code; throws an `EddyError` naming the field. */
export function checkCase(c: unknown, where = 'case'): asserts c is PipelineCase {
  validator.check(caseSchema, c, where);
}

/** Reads and checks a case file (YAML or JSON); errors name the file and the field. */
export function readCaseFile(path: string): CaseFile {
  const doc = readYamlFile(path);
  try {
    validator.check(fileSchema, doc, '');
  } catch (err) {
    throw invalid(`${path}: ${(err as Error).message.replace(/^: /, '')}`);
  }
  return { ...(doc as CaseFile), path };
}

/**
 * The pipeline artefact a case runs: its own `pipeline`, else its file's. A
 * string naming a file (relative to the case file) is read: a pipeline
 * artefact, or a config file whose `pipeline` section is searched for `id`
 * (or holds exactly one). A string with a newline is the artefact's text.
 */
export function resolvePipeline(file: CaseFile, c: PipelineCase): unknown {
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
