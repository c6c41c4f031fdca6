/**
 * The thread that parses YAML request bodies (see yaml-parser.ts for why a
 * thread). It answers each job with the parsed value or a message naming
 * what is wrong; it measures the value it built exactly, since aliases can
 * make a value deeper or larger than its text.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { parse } from 'yaml';
import { yamlErrorMessage } from '../core/yaml-error';
import { tooDeepMessage, yamlTooDeep } from './depth';

export interface YamlJob {
  id: number;
  text: string;
  maxDepth: number;
  maxAliasCount: number;
  /** how large the value may be once aliases are expanded, counted as JSON text */
  maxExpandedBytes: number;
}

export type YamlAnswer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

export function parseYamlJob(job: YamlJob): YamlAnswer {
  // first the depth on the raw text: the yaml library stalls on deep documents and aborts the process near a thousand levels
  const tooDeep = yamlTooDeep(job.text, job.maxDepth);
  if (tooDeep) return { id: job.id, ok: false, error: tooDeepMessage(tooDeep, job.maxDepth) };
  let value: unknown;
  try {
    value = parse(job.text, { maxAliasCount: job.maxAliasCount, logLevel: 'error' });
  } catch (err) {
    const message = (err as Error).message.split('\n')[0];
    if (err instanceof ReferenceError && message.includes('alias count')) {
      return { id: job.id, ok: false, error: `body: YAML aliases expand too much (more than ${job.maxAliasCount} alias uses): ${message}` };
    }
    return { id: job.id, ok: false, error: `body: invalid YAML: ${yamlErrorMessage(err, job.text)}` };
  }
  const problem = measure(value, job.maxDepth, job.maxExpandedBytes);
  return problem === undefined ? { id: job.id, ok: true, value } : { id: job.id, ok: false, error: problem };
}

/**
 * Walks the value without recursion: depth, cycles (`&a [*a]` builds a value
 * that contains itself, which nothing downstream can walk) and size as JSON
 * text, stopping as soon as a limit is passed, so the walk itself stays bounded.
 */
export function measure(value: unknown, maxDepth: number, maxBytes: number): string | undefined {
  const onPath = new Set<object>();
  const stack: { node: unknown; depth: number; leave?: boolean }[] = [{ node: value, depth: 0 }];
  let bytes = 0;
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const { node, depth, leave } = top;
    if (leave) {
      onPath.delete(node as object);
      continue;
    }
    if (node !== null && typeof node === 'object') {
      if (onPath.has(node)) return 'body: YAML aliases form a cycle (a collection contains itself)';
      if (depth + 1 > maxDepth) return `body: nested deeper than ${maxDepth} levels once YAML aliases are expanded`;
      onPath.add(node);
      stack.push({ node, depth, leave: true });
      const entries = Array.isArray(node) ? node.map((item) => ['', item] as const) : Object.entries(node);
      bytes += 2 + entries.length;
      for (const [key, item] of entries) {
        bytes += key.length + (Array.isArray(node) ? 0 : 3);
        stack.push({ node: item, depth: depth + 1 });
      }
    } else {
      bytes += typeof node === 'string' ? node.length + 2 : String(node).length;
    }
    if (bytes > maxBytes) return `body: the YAML document expands (through aliases) to more than ${maxBytes} bytes as JSON`;
  }
  return undefined;
}

/** Marks the thread started by yaml-parser.ts, so that importing this module anywhere else does nothing. */
export const YAML_WORKER_MARK = 'eddy-yaml-parser';

const port = workerData === YAML_WORKER_MARK ? parentPort : null;
port?.on('message', (job: YamlJob) => port.postMessage(parseYamlJob(job)));
