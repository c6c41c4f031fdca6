/**
 * The generators of the fuzz section (fast-check arbitraries, drawn with a
 * fixed seed so a run can be repeated): HTTP requests for the REST API and
 * byte lines for a tcp onramp with the json codec.
 *
 * Published artefacts use only types that touch neither files nor the
 * network nor the process's life (metronome, crononome, debug, stdout,
 * stderr): a fuzzer must not truncate files, bind ports or stop the server
 * it is testing. Everything else is left to chance.
 */
import fc from 'fast-check';

/** One generated HTTP request. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** the name of a body in HOSTILE, built to exhaust the parser (deep nesting, many MB, alias expansion); sent instead of `body` */
  hostile?: string;
}

export const KINDS = ['onramp', 'offramp', 'pipeline', 'binding'] as const;
type Kind = (typeof KINDS)[number];

/** The artefact ids requests mostly use: the base config's and a few more, so that publishes, activations and deletes meet. */
export const ID_POOL = ['ticks', 'console', 'route', 'flow', 'alpha', 'beta', 'gamma'];
const INSTANCE_POOL = ['main', 'other', 'x'];

const poolId = fc.constantFrom(...ID_POOL);
const validId = fc.stringMatching(/^[a-z][a-zA-Z_:]{0,14}$/);
/** any id, valid or not: printable ASCII, any Unicode, very long, or a path trick */
const anyId = fc.oneof(
  { arbitrary: poolId, weight: 6 },
  { arbitrary: validId, weight: 3 },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }), weight: 1 },
  { arbitrary: fc.constantFrom('a'.repeat(5000), 'system::passthrough', 'system::metrics', 'system::stdout', '..', '.', 'A', '_', '1', ':'), weight: 1 },
);

/** Ids of published artefacts: from the pool, or ones that should be refused; never a fresh valid id, so the repository stays small. */
const publishId = fc.oneof(
  { arbitrary: poolId, weight: 6 },
  { arbitrary: fc.string({ maxLength: 20 }).filter((s) => !/^[a-z][a-zA-Z_:]*$/.test(s)), weight: 2 },
  { arbitrary: fc.constantFrom('a'.repeat(5000), 'Upper', '1abc', 'a-b', 'a b', '', 'system::passthrough'), weight: 1 },
);

/** A segment as it goes into the path: mostly percent-encoded, sometimes raw tricks the encoder would have hidden. */
const segment = (id: fc.Arbitrary<string>) =>
  fc.oneof(
    { arbitrary: id.map((s) => encodeURIComponent(s)), weight: 12 },
    { arbitrary: fc.constantFrom('%', '%zz', '%00', '%2e%2e', '%2F', '..', ';x', '~', '%C0%AE'), weight: 1 },
  );

const kindSegment = fc.oneof(
  { arbitrary: fc.constantFrom<string>(...KINDS), weight: 12 },
  { arbitrary: fc.constantFrom('version', 'health', 'onramps', 'Onramp', 'binding ', 'mapping'), weight: 1 },
  { arbitrary: fc.string({ maxLength: 10 }), weight: 1 },
);

const path = fc
  .tuple(
    kindSegment.map((k) => encodeURIComponent(k)),
    fc.integer({ min: 0, max: 4 }),
    fc.array(segment(anyId), { minLength: 3, maxLength: 3 }),
    fc.option(fc.constantFrom('?a=1', '?a=1&a=2', '?x=%zz', '?' + 'q'.repeat(3000), '#frag', '//'), { freq: 8 }),
  )
  .map(([kind, depth, segs, tail]) => {
    const parts = depth === 0 ? [] : [kind, ...segs.slice(0, depth - 1)];
    if (depth === 4) parts.push(segs[2]);
    return `/${parts.join('/')}${tail ?? ''}`;
  });

const method = fc.oneof(
  { arbitrary: fc.constantFrom('GET', 'POST', 'DELETE'), weight: 10 },
  { arbitrary: fc.constantFrom('PUT', 'PATCH', 'HEAD', 'OPTIONS'), weight: 2 },
  { arbitrary: fc.constantFrom('TRACE', 'PROPFIND', 'FOO'), weight: 1 },
);

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json;charset=latin1'];
const YAML_TYPES = ['application/yaml', 'text/yaml', 'application/x-yaml', 'application/yaml; charset=utf-8'];
const contentType = fc.oneof(
  { arbitrary: fc.constantFrom(...JSON_TYPES), weight: 6 },
  { arbitrary: fc.constantFrom(...YAML_TYPES), weight: 4 },
  { arbitrary: fc.constant(undefined), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      'application/msgpack',
      '*/*',
      ';',
      'application/json, application/yaml',
    ),
    weight: 2,
  },
  { arbitrary: fc.string({ maxLength: 30 }), weight: 1 },
);

const mediaRange = fc.constantFrom(
  'application/json',
  'application/yaml',
  'text/yaml',
  'application/x-yaml',
  '*/*',
  'application/*',
  'text/html',
  'text/*',
  'image/png',
);
const accept = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 4 },
  { arbitrary: mediaRange, weight: 4 },
  {
    arbitrary: fc
      .array(fc.tuple(mediaRange, fc.option(fc.constantFrom('0', '0.1', '0.5', '1', '1.0', '2', '-1', 'abc', '0.0001'))), { minLength: 2, maxLength: 4 })
      .map((parts) => parts.map(([type, q]) => (q === null ? type : `${type};q=${q}`)).join(', ')),
    weight: 3,
  },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 1 },
);

const origin = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 12 },
  { arbitrary: fc.constantFrom('http://127.0.0.1', 'http://evil.example', 'null', 'file://'), weight: 1 },
);

/** A valid artefact of `kind` named `id`, of a safe type. */
const artefact = (kind: Kind, id: fc.Arbitrary<string>): fc.Arbitrary<Record<string, unknown>> => {
  switch (kind) {
    case 'onramp':
      return fc.oneof(
        fc.record({ id, type: fc.constant('metronome'), config: fc.record({ interval: fc.integer({ min: 200, max: 5000 }) }) }),
        fc.record({ id, type: fc.constant('crononome'), config: fc.constant({ entries: [{ name: 'tick', expr: '*/30 * * * * *' }] }) }),
      );
    case 'offramp':
      return fc.record({ id, type: fc.constantFrom('debug', 'stdout', 'stderr'), codec: fc.constantFrom('json', 'string', 'msgpack') });
    case 'pipeline':
      return fc.record({
        id,
        interface: fc.constant({ inputs: ['in'], outputs: ['out'] }),
        nodes: fc.constantFrom(
          [{ id: 'pass', type: 'passthrough' }],
          [{ id: 'pass', type: 'runtime::cel', config: { set: { seen: 'true' } } }],
          [{ id: 'pass', type: 'generic::batch', config: { count: 10, timeout: 100 } }],
        ),
        links: fc.constant({ in: ['pass'], pass: ['out'] }),
      });
    case 'binding':
      return fc.record({
        id,
        links: fc.tuple(poolId, poolId, poolId).map(([on, pipe, off]) => ({
          [`/onramp/${on}/{instance}/out`]: [`/pipeline/${pipe}/{instance}/in`],
          [`/pipeline/${pipe}/{instance}/out`]: [`/offramp/${off}/{instance}/in`],
        })),
      });
  }
};

/** Small structural damage to a valid artefact: keys removed, values replaced by random JSON, extra keys, a wrong-typed id. */
const mutate = (value: Record<string, unknown>): fc.Arbitrary<unknown> =>
  fc
    .array(fc.tuple(fc.integer({ min: 0, max: 4 }), fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 })), { minLength: 1, maxLength: 3 })
    .map((edits) => {
      const out: Record<string, unknown> = structuredClone(value);
      for (const [op, key, json] of edits) {
        const keys = Object.keys(out);
        const pick = keys.length ? keys[key.length % keys.length] : 'id';
        // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- the damage is a random key of a JSON object removed
        if (op === 0) delete out[pick];
        else if (op === 1) out[pick] = json;
        else if (op === 2) out[key] = json;
        else if (op === 3) out.id = json;
        else if (typeof out.config === 'object' && out.config !== null) (out.config as Record<string, unknown>)[key] = json;
        else out.config = json;
      }
      return out;
    });

/** How a body value is written: by the request's content type when it names one, otherwise either. */
const serialise = (value: unknown, type: string | undefined, asYaml: boolean): Buffer => {
  const t = (type ?? '').toLowerCase();
  const yaml = YAML_TYPES.some((y) => t.startsWith(y.split(';')[0])) || (!t.includes('json') && asYaml);
  return Buffer.from(yaml ? yamlOf(value) : (JSON.stringify(value) ?? 'null'));
};

/** YAML by hand for plain JSON values (block style for maps, flow for the rest): no dependency on the server's own library. */
function yamlOf(value: unknown, indent = ''): string {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return '{}';
    return entries
      .map(([k, v]) => {
        const inner = yamlOf(v, indent + '  ');
        const block = v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0;
        return `${indent}${JSON.stringify(k)}:${block ? `\n${inner}` : ` ${inner}`}`;
      })
      .join('\n');
  }
  return JSON.stringify(value) ?? 'null';
}

/** YAML the JSON path never produces: anchors, tags, merge keys, duplicate keys, several documents. */
const yamlTricks = fc.constantFrom(
  'a: &x [1, 2]\nb: *x\nid: alpha',
  'id: !!js/function "function(){}"\ntype: metronome',
  'id: !!binary aGVsbG8=\ntype: metronome',
  '<<: {id: alpha, type: metronome}\nconfig: {interval: 1000}',
  'id: alpha\nid: beta\ntype: metronome',
  'id: alpha\n---\nid: beta',
  'id: *undefined_alias',
  '? [complex, key]\n: value',
  '%YAML 1.1\n---\nid: alpha\ntype: metronome\nconfig: {interval: 0x3e8}',
  'id: alpha\ntype: metronome\nconfig: {interval: .inf}',
  '\t- tab indented',
  'id: "\\ud800"',
);

/**
 * Bodies meant to exhaust a parser; few, but each is timed, and another
 * request is made while it is in flight. Built when sent, not when
 * generated (some are megabytes).
 */
export const HOSTILE: Record<string, { type: string; make: () => Buffer }> = {
  'json-depth-10000': { type: 'application/json', make: () => Buffer.from('['.repeat(10000) + ']'.repeat(10000)) },
  'json-depth-100000': { type: 'application/json', make: () => Buffer.from('{"a":'.repeat(100000) + '1' + '}'.repeat(100000)) },
  'yaml-flow-depth-10000': { type: 'application/yaml', make: () => Buffer.from('['.repeat(10000) + ']'.repeat(10000)) },
  'yaml-block-depth-2000': {
    type: 'application/yaml',
    make: () => Buffer.from(Array.from({ length: 2000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1'),
  },
  'yaml-alias-expansion': { type: 'application/yaml', make: () => Buffer.from(aliasBomb(9, 9)) },
  'json-2mb-array': { type: 'application/json', make: () => Buffer.from(JSON.stringify(Array.from({ length: 250000 }, (_, i) => i))) },
  'body-12mb': { type: 'application/json', make: () => Buffer.alloc(12 * 1024 * 1024, 0x61) },
};
const hostile = fc.constantFrom(...Object.keys(HOSTILE));

/** `levels` anchors, each a list of `width` aliases of the one before: width^levels nodes once expanded. */
function aliasBomb(levels: number, width: number): string {
  const lines = ['l0: &l0 [x]'];
  for (let i = 1; i <= levels; i++) lines.push(`l${i}: &l${i} [${Array.from({ length: width }, () => `*l${i - 1}`).join(', ')}]`);
  lines.push(`id: alpha`);
  return lines.join('\n');
}

const kindOfPath = (p: string): Kind => ((KINDS as readonly string[]).find((k) => p.startsWith(`/${k}`)) as Kind) ?? 'onramp';

/** The body of a request, given its path and content type. */
const body = (p: string, type: string | undefined): fc.Arbitrary<{ body?: Buffer; hostile?: string; type?: string }> => {
  const kind = kindOfPath(p);
  return fc.oneof(
    { arbitrary: fc.constant({}), weight: 5 },
    { arbitrary: fc.tuple(artefact(kind, poolId), fc.boolean()).map(([a, y]) => ({ body: serialise(a, type, y) })), weight: 25 },
    { arbitrary: fc.tuple(artefact(kind, publishId), fc.boolean()).map(([a, y]) => ({ body: serialise(a, type, y) })), weight: 10 },
    { arbitrary: fc.tuple(artefact(kind, poolId).chain(mutate), fc.boolean()).map(([a, y]) => ({ body: serialise(a, type, y) })), weight: 40 },
    { arbitrary: fc.record({ instance: fc.constantFrom(...INSTANCE_POOL) }).map((m) => ({ body: serialise(m, type, false) })), weight: 10 },
    { arbitrary: fc.tuple(fc.jsonValue({ maxDepth: 4 }), fc.boolean()).map(([v, y]) => ({ body: serialise(v, type, y) })), weight: 15 },
    { arbitrary: fc.string({ unit: 'grapheme', maxLength: 200 }).map((s) => ({ body: Buffer.from(s) })), weight: 10 },
    { arbitrary: fc.uint8Array({ maxLength: 512 }).map((b) => ({ body: Buffer.from(b) })), weight: 10 },
    { arbitrary: yamlTricks.map((s) => ({ body: Buffer.from(s) })), weight: 10 },
    { arbitrary: hostile.map((name) => ({ hostile: name, type: HOSTILE[name].type })), weight: 2 },
  );
};

const kindArb = fc.constantFrom<Kind>(...KINDS);
const instanceId = fc.oneof({ arbitrary: fc.constantFrom(...INSTANCE_POOL), weight: 4 }, { arbitrary: anyId, weight: 1 });
const seg = (id: fc.Arbitrary<string>) => segment(id);

/**
 * What a request tries to do, weighted like an API's real use: mostly
 * publishing (with valid, mutated or random bodies), activating, reading
 * and removing, at the spec's paths with pooled or random ids; a sixth of
 * the requests are anything at all (method, path, body).
 */
const operation: fc.Arbitrary<{ method: string; path: string; withBody: boolean }> = fc.oneof(
  { arbitrary: kindArb.map((k) => ({ method: 'POST', path: `/${k}`, withBody: true })), weight: 35 },
  {
    arbitrary: fc.tuple(kindArb, seg(anyId), seg(instanceId), fc.boolean()).map(([k, a, i, b]) => ({ method: 'POST', path: `/${k}/${a}/${i}`, withBody: b })),
    weight: 12,
  },
  { arbitrary: kindArb.map((k) => ({ method: 'GET', path: `/${k}`, withBody: false })), weight: 6 },
  { arbitrary: fc.tuple(kindArb, seg(anyId)).map(([k, a]) => ({ method: 'GET', path: `/${k}/${a}`, withBody: false })), weight: 6 },
  { arbitrary: fc.tuple(kindArb, seg(anyId), seg(instanceId)).map(([k, a, i]) => ({ method: 'GET', path: `/${k}/${a}/${i}`, withBody: false })), weight: 5 },
  { arbitrary: fc.tuple(kindArb, seg(anyId)).map(([k, a]) => ({ method: 'DELETE', path: `/${k}/${a}`, withBody: false })), weight: 8 },
  { arbitrary: fc.tuple(kindArb, seg(anyId), seg(instanceId)).map(([k, a, i]) => ({ method: 'DELETE', path: `/${k}/${a}/${i}`, withBody: false })), weight: 8 },
  { arbitrary: fc.tuple(method, path, fc.boolean()).map(([m, p, b]) => ({ method: m, path: p, withBody: b })), weight: 20 },
);

/** Requests, `count` of them, the same for the same seed. */
export function generateRequests(count: number, seed: number): FuzzRequest[] {
  const request = fc
    .record({ op: operation, contentType, accept, origin })
    .chain((r) =>
      (r.op.withBody ? body(r.op.path, r.contentType) : fc.constant<{ body?: Buffer; hostile?: string; type?: string }>({})).map((b) => ({ ...r, ...b })),
    )
    .map((r): FuzzRequest => {
      const headers: Record<string, string> = {};
      const type = r.type ?? r.contentType;
      if (type !== undefined) headers['content-type'] = type;
      if (r.accept !== undefined) headers.accept = r.accept;
      if (r.origin !== undefined) headers.origin = r.origin;
      return { method: r.op.method, path: r.op.path, headers, body: r.body, hostile: r.hostile };
    });
  return fc.sample(request, { seed, numRuns: count });
}

// ---- mutated events for the tcp onramp ----

/** One line for the tcp onramp, and whether it is valid JSON (strict UTF-8, then JSON.parse): the oracle. */
export interface FuzzLine {
  bytes: Buffer;
  valid: boolean;
  kind: 'sample' | 'mutated' | 'json' | 'bytes' | 'edge';
}

// ignoreBOM keeps a leading U+FEFF in the text, so JSON.parse sees it (JSON text has no byte order mark, RFC 8259 section 8.1)
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function isValidJson(bytes: Buffer): boolean {
  try {
    JSON.parse(utf8.decode(bytes));
    return true;
  } catch {
    return false;
  }
}

/** Damage to a line's bytes: a byte changed, removed, inserted or two swapped, a cut, a slice repeated. */
const damage = (line: Buffer) =>
  fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.nat(), fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }).map((edits) => {
    let b = Buffer.from(line);
    for (const [op, p1, p2, byte] of edits) {
      const i = b.length ? p1 % b.length : 0;
      const j = b.length ? p2 % b.length : 0;
      if (op === 0 && b.length) b[i] = byte;
      else if (op === 1) b = Buffer.concat([b.subarray(0, i), b.subarray(i + 1)]);
      else if (op === 2) b = Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i)]);
      else if (op === 3 && b.length) [b[i], b[j]] = [b[j], b[i]];
      else if (op === 4) b = b.subarray(0, i);
      else b = Buffer.concat([b.subarray(0, Math.min(i, j)), b.subarray(Math.min(i, j), Math.max(i, j)), b.subarray(Math.min(i, j))]);
    }
    return b;
  });

/** Values at the edges of what a JSON codec carries. */
const EDGE_LINES = [
  '9007199254740992',
  '9007199254740993',
  '-9007199254740993',
  '18446744073709551615',
  '-9223372036854775808',
  '1e400',
  '-0',
  '0.1e-400',
  '{"a":1,"a":2}',
  ' {} ',
  '[]',
  'null',
  'true',
  '""',
  '"\\ud800"',
  '"\\u0000"',
  '\ufeff{}',
  '{"a":"\u2028"}',
  '[1,]',
  '{"a":1}{"b":2}',
  '',
  ' ',
  '\r',
  'NaN',
  '{"__proto__":{"x":1}}',
].map((s) => Buffer.from(s));
const OVERLONG_UTF8 = [
  Buffer.from([0x22, 0xc0, 0xaf, 0x22]),
  Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]),
  Buffer.from([0x22, 0xf8, 0x88, 0x80, 0x80, 0x80, 0x22]),
];

/** `count` lines (no newline inside any), the same for the same seed and samples. */
export function generateLines(count: number, seed: number, samples: Buffer[]): FuzzLine[] {
  const sample = fc.constantFrom(...samples);
  const line = fc.oneof(
    { arbitrary: sample.map((b) => ({ b, kind: 'sample' as const })), weight: 30 },
    { arbitrary: sample.chain(damage).map((b) => ({ b, kind: 'mutated' as const })), weight: 40 },
    { arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => ({ b: Buffer.from(JSON.stringify(v)), kind: 'json' as const })), weight: 10 },
    { arbitrary: fc.uint8Array({ maxLength: 200 }).map((u) => ({ b: Buffer.from(u), kind: 'bytes' as const })), weight: 10 },
    { arbitrary: fc.constantFrom(...EDGE_LINES, ...OVERLONG_UTF8).map((b) => ({ b, kind: 'edge' as const })), weight: 10 },
  );
  return fc.sample(line, { seed, numRuns: count }).map(({ b, kind }) => {
    const bytes = Buffer.from(b);
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) bytes[i] = 0x20; // the newline is the frame separator
    return { bytes, valid: isValidJson(bytes), kind };
  });
}
