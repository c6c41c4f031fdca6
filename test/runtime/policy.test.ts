/**
 * The publish policy (`--allow-path`, `--allow-exit`, the API's address):
 * every path-bearing field of every builtin type, `..` and symlink escapes,
 * the exit-capable parts, and the 400 over REST.
 */
import { expect } from 'chai';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createLogger } from '../../src/core/logger';
import { Runtime } from '../../src/runtime/runtime';
import { PathPolicy, isLoopback, type PolicyOptions } from '../../src/runtime/policy';
import { pathFields } from '../../src/schema/paths';
import { parseRunArgs } from '../../src/cli/server-run';
import type { JsonSchema } from '../../src/schema/json-schema';
import { call, startRuntime } from '../helpers/runtime';
import { runEddy } from '../helpers/cli';
import { makeCerts, type TestCerts } from '../helpers/certs';

/** Certificates for the listeners' `tls` fields, which are read at publish: made in `before`. */
let certs: TestCerts;
/** The TLS files inside the allowed root of the test at hand (`tls.cert`: the server certificate, …). */
let tlsFiles: { cert: string; key: string; ca: string };

/** A runtime (not started: the repository alone decides at publish) with this policy. */
const runtimeWith = (options: PolicyOptions) => new Runtime({ logger: createLogger('silent'), policy: new PathPolicy(options) });

/** The type's own example with `path` written into one path field. */
function rampWithPath(
  runtime: Runtime,
  kind: 'onramp' | 'offramp',
  type: string,
  keys: readonly string[],
  path: string,
  partner: string,
): Record<string, unknown> {
  const t = kind === 'onramp' ? runtime.registries.onramps.get(type) : runtime.registries.offramps.get(type);
  const config = structuredClone(t.example)!;
  let at = config;
  for (const key of keys.slice(0, -1)) at = (at[key] ??= {}) as Record<string, unknown>;
  at[keys[keys.length - 1]] = path;
  // what the type needs beside the field to publish: nats TLS files go in pairs, kafka TLS files need TLS on
  if (type === 'nats' && keys[1] === 'cert_path') (config.options as Record<string, unknown>).key_path = partner;
  if (type === 'nats' && keys[1] === 'key_path') (config.options as Record<string, unknown>).cert_path = partner;
  if (type === 'kafka') (config.rdkafka_options as Record<string, unknown>)['security.protocol'] = 'ssl';
  // a listener's TLS files are read at publish: the others are real files inside the roots
  if (keys[0] === 'tls') config.tls = { cert: tlsFiles.cert, key: tlsFiles.key, [keys[1]]: path };
  if (keys[0] === 'tls' && type === 'otel' && kind === 'offramp') config.endpoint = 'https://collector.invalid'; // never reached: publish only
  return { id: 'probe', type, config, ...(t.linkable === 'required' ? { linked: true } : {}) };
}

const walPipeline = (dir: string) => ({
  id: 'probe',
  interface: { inputs: ['in'], outputs: ['out'] },
  nodes: [{ id: 'wal', type: 'qos::wal', config: { read_count: 1, max_elements: 10, dir } }],
  links: { in: ['wal'], wal: ['out'] },
});

/** The builtin types, whose schemas declare their path fields (`path`, schema/paths.ts). */
const BUILTINS = new Runtime({ logger: createLogger('silent') }).registries;

const rampRegistry = (kind: 'onramp' | 'offramp') => (kind === 'onramp' ? BUILTINS.onramps : BUILTINS.offramps);

/** Every path field of a builtin ramp type as [kind, type, keys, field name in the 400]. */
const PATH_FIELDS: ['onramp' | 'offramp', string, readonly string[], string][] = (['onramp', 'offramp'] as const).flatMap((kind) =>
  rampRegistry(kind)
    .names()
    .flatMap((type) =>
      pathFields(rampRegistry(kind).get(type).configSchema).map(
        ({ keys }) => [kind, type, keys, `config.${keys.join('.')}`] as ['onramp' | 'offramp', string, readonly string[], string],
      ),
    ),
);

/** The path fields of the builtin operators and codecs, as `type keys`. */
const pathsOfTypes = (registry: { names(): string[]; get(name: string): { configSchema?: JsonSchema } }) =>
  registry.names().flatMap((type) => pathFields(registry.get(type).configSchema).map(({ keys, use }) => `${type} ${keys.join('.')} ${use}`));

describe('policy: what published artefacts may reach (--allow-path, --allow-exit)', () => {
  let dir: string;
  let allowed: string;
  let outside: string;

  before(() => (certs = makeCerts()));
  after(() => certs.remove());
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'eddy-policy-'));
    allowed = join(dir, 'allowed');
    outside = join(dir, 'outside');
    mkdirSync(allowed);
    mkdirSync(outside);
    tlsFiles = { cert: join(allowed, 'server.pem'), key: join(allowed, 'server.key'), ca: join(allowed, 'ca.pem') };
    copyFileSync(certs.server.cert, tlsFiles.cert);
    copyFileSync(certs.server.key, tlsFiles.key);
    copyFileSync(certs.ca, tlsFiles.ca);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const [kind, type, keys, field] of PATH_FIELDS) {
    it(`confines ${kind} ${type} ${field}`, () => {
      const runtime = runtimeWith({ allowPaths: [allowed] });
      const inside = join(allowed, 'sub', 'x.json');
      const refused = join(outside, 'x.json');
      if (keys[0] === 'tls') {
        // a TLS file must exist and be the right one to publish
        mkdirSync(dirname(inside));
        copyFileSync(tlsFiles[keys[1] as 'cert' | 'key' | 'ca'], inside);
      }
      expect(() => runtime.publish(kind, rampWithPath(runtime, kind, type, keys, inside, inside))).to.not.throw();
      expect(() => runtime.publish(kind, { ...rampWithPath(runtime, kind, type, keys, refused, inside), id: 'other' })).to.throw(
        `${field}: '${refused}' is outside the allowed paths (${allowed})`,
      );
    });
  }

  it('covers every path a builtin type reads or writes', () => {
    expect(PATH_FIELDS.map(([kind, type, , field]) => `${kind} ${type} ${field}`)).to.have.members([
      ...['onramp', 'offramp'].flatMap((kind) => [
        ...['credentials_path', 'cert_path', 'key_path', 'root_cert'].map((f) => `${kind} nats config.options.${f}`),
        ...['ca', 'certificate', 'key', 'keystore', 'crl'].map((f) => `${kind} kafka config.rdkafka_options.ssl.${f}.location`),
      ]),
      'onramp file config.source',
      'onramp blaster config.source',
      'onramp cb config.source',
      'onramp postgres config.cache.path',
      'onramp pubsub config.pem',
      ...['rest', 'ws', 'tcp', 'otel'].flatMap((type) => ['cert', 'key', 'ca'].map((f) => `onramp ${type} config.tls.${f}`)),
      'offramp file config.file',
      'offramp kv config.dir',
      'offramp logvendor config.ca_file',
      ...['cert', 'key', 'ca'].map((f) => `offramp otel config.tls.${f}`),
    ]);
    expect(pathsOfTypes(BUILTINS.operators)).to.have.members(['qos::wal dir tree', 'enrich::lookup table.file read']);
    expect(pathsOfTypes(BUILTINS.codecs)).to.have.members(['avro schema_file read', 'protobuf schema_file read']);
    // what eddy writes (and `eddy validate` checks can be written); every other path is read
    const written = (['onramp', 'offramp'] as const).flatMap((kind) =>
      rampRegistry(kind)
        .names()
        .flatMap((type) =>
          pathFields(rampRegistry(kind).get(type).configSchema)
            .filter((f) => f.use !== 'read')
            .map((f) => `${kind} ${type} ${f.keys.join('.')} ${f.use}`),
        ),
    );
    expect(written).to.have.members(['offramp file file file', 'offramp kv dir tree', 'onramp postgres cache.path tree']);
  });

  it('confines the file of an enrich::lookup table, naming the node', () => {
    const runtime = runtimeWith({ allowPaths: [allowed] });
    const lookup = (file: string, id: string) => ({
      id,
      interface: { inputs: ['in'], outputs: ['out'] },
      nodes: [{ id: 'owners', type: 'enrich::lookup', config: { table: { file, key: 'host' }, key: 'event.host', into: 'owner' } }],
      links: { in: ['owners'], owners: ['out'] },
    });
    expect(() => runtime.publish('pipeline', lookup(join(allowed, 'owners.csv'), 'inside'))).to.not.throw();
    expect(() => runtime.publish('pipeline', lookup(join(outside, 'owners.csv'), 'outside'))).to.throw(
      `nodes[0].config.table.file: '${join(outside, 'owners.csv')}' is outside the allowed paths (${allowed})`,
    );
  });

  it('confines the qos::wal dir, naming the node; a wal without a dir (a temporary one) is allowed', () => {
    const runtime = runtimeWith({ allowPaths: [allowed] });
    expect(() => runtime.publish('pipeline', walPipeline(join(allowed, 'wal')))).to.not.throw();
    expect(() => runtime.publish('pipeline', { ...walPipeline(outside), id: 'other' })).to.throw(
      `nodes[0].config.dir: '${outside}' is outside the allowed paths (${allowed})`,
    );
    const noDir = walPipeline('x');
    delete (noDir.nodes[0].config as { dir?: string }).dir;
    expect(() => runtime.publish('pipeline', { ...noDir, id: 'temp' })).to.not.throw();
  });

  it('resolves .. and symlinks of the existing part, dangling ones included; relative paths from the working directory', () => {
    const runtime = runtimeWith({ allowPaths: [allowed, join(dir, 'other-root')] });
    const roots = `${allowed}, ${join(dir, 'other-root')}`;
    const offramp = (file: string, id = 'probe') => ({ id, type: 'file', config: { file } });
    const dotdot = join(allowed, '..', 'outside', 'x');
    expect(() => runtime.publish('offramp', offramp(`${allowed}/../outside/x`, 'a'))).to.throw(
      `config.file: '${allowed}/../outside/x' (resolves to ${join(outside, 'x')}) is outside the allowed paths (${roots})`,
    );
    expect(dotdot).to.equal(join(outside, 'x'));
    symlinkSync(outside, join(allowed, 'escape'));
    expect(() => runtime.publish('offramp', offramp(join(allowed, 'escape', 'x'), 'b'))).to.throw(
      `(resolves to ${join(outside, 'x')}) is outside the allowed paths`,
    );
    // a link followed by ..: the parent of the link's target, not of the link
    mkdirSync(join(outside, 'deep'));
    symlinkSync(join(outside, 'deep'), join(allowed, 'deep'));
    expect(() => runtime.publish('offramp', offramp(`${allowed}/deep/../x`, 'c'))).to.throw(`(resolves to ${join(outside, 'x')}) is outside the allowed paths`);
    // a dangling link: the file offramp would create its target
    symlinkSync(join(outside, 'new.json'), join(allowed, 'dangling.json'));
    expect(() => runtime.publish('offramp', offramp(join(allowed, 'dangling.json'), 'd'))).to.throw(
      `(resolves to ${join(outside, 'new.json')}) is outside the allowed paths`,
    );
    // links and .. that stay inside are fine, and so is a path that does not exist yet
    writeFileSync(join(allowed, 'real.json'), '');
    symlinkSync(join(allowed, 'real.json'), join(allowed, 'alias.json'));
    expect(() => runtime.publish('offramp', offramp(join(allowed, 'alias.json'), 'e'))).to.not.throw();
    expect(() => runtime.publish('offramp', offramp(`${allowed}/missing/../new/x.json`, 'f'))).to.not.throw();
    const cwd = process.cwd();
    try {
      process.chdir(allowed);
      expect(() => runtime.publish('offramp', offramp('relative.json', 'g'))).to.not.throw();
      expect(() => runtime.publish('offramp', offramp('../outside/relative.json', 'h'))).to.throw(
        `(resolves to ${join(outside, 'relative.json')}) is outside the allowed paths`,
      );
    } finally {
      process.chdir(cwd);
    }
  });

  it('a root given through a symlink or with .. covers what it resolves to', () => {
    symlinkSync(allowed, join(dir, 'root-link'));
    const runtime = runtimeWith({ allowPaths: [join(dir, 'root-link'), `${outside}/../outside`] });
    expect(() => runtime.publish('offramp', { id: 'a', type: 'file', config: { file: join(allowed, 'x') } })).to.not.throw();
    expect(() => runtime.publish('offramp', { id: 'b', type: 'file', config: { file: join(outside, 'x') } })).to.not.throw();
    expect(() => runtime.publish('offramp', { id: 'c', type: 'file', config: { file: join(dir, 'x') } })).to.throw(
      `config.file: '${join(dir, 'x')}' is outside the allowed paths`,
    );
  });

  it('without --allow-path: any path on loopback (or with no API), none beyond loopback', () => {
    for (const apiHost of ['127.0.0.1', 'localhost', '::1', undefined]) {
      expect(() => runtimeWith({ apiHost }).publish('offramp', { id: 'w', type: 'file', config: { file: '/etc/passwd' } })).to.not.throw();
    }
    const exposed = runtimeWith({ apiHost: '0.0.0.0' });
    expect(() => exposed.publish('offramp', { id: 'w', type: 'file', config: { file: join(allowed, 'x') } })).to.throw(
      `config.file: '${join(allowed, 'x')}' is refused: the API listens beyond loopback (0.0.0.0) and no --allow-path is given`,
    );
    expect(() => exposed.publish('pipeline', walPipeline(allowed))).to.throw(
      `nodes[0].config.dir: '${allowed}' is refused: the API listens beyond loopback (0.0.0.0)`,
    );
    const confined = runtimeWith({ apiHost: '0.0.0.0', allowPaths: [allowed] });
    expect(() => confined.publish('offramp', { id: 'w', type: 'file', config: { file: join(allowed, 'x') } })).to.not.throw();
  });

  it('beyond loopback, refuses what can stop the process unless --allow-exit: exit, blackhole with stop_after_secs, cb, file close_on_done', () => {
    const parts: ['onramp' | 'offramp', Record<string, unknown>, string][] = [
      ['offramp', { id: 'x', type: 'exit' }, 'type: refused: the exit offramp stops the process on an event'],
      ['offramp', { id: 'x', type: 'blackhole', config: { warmup_secs: 0, stop_after_secs: 5, significant_figures: 2 } }, 'config.stop_after_secs: refused'],
      ['onramp', { id: 'x', type: 'cb', config: { source: join(allowed, 'cb.json') } }, 'type: refused: the cb onramp stops the process'],
      ['onramp', { id: 'x', type: 'file', config: { source: join(allowed, 'in.json'), close_on_done: true } }, 'config.close_on_done: refused'],
    ];
    for (const [kind, artefact, message] of parts) {
      expect(() => runtimeWith({ apiHost: '127.0.0.1' }).publish(kind, artefact)).to.not.throw();
      expect(() => runtimeWith({ allowPaths: [allowed], apiHost: '0.0.0.0' }).publish(kind, artefact)).to.throw(message);
      expect(() => runtimeWith({ allowPaths: [allowed], apiHost: '0.0.0.0' }).publish(kind, artefact)).to.throw(
        'and the API listens beyond loopback (0.0.0.0); start with --allow-exit to allow it',
      );
      expect(() => runtimeWith({ allowPaths: [allowed], apiHost: '0.0.0.0', allowExit: true }).publish(kind, artefact)).to.not.throw();
    }
    // the same types, unable to stop the process, are fine
    const exposed = runtimeWith({ allowPaths: [allowed], apiHost: '10.1.2.3' });
    expect(() =>
      exposed.publish('offramp', { id: 'y', type: 'blackhole', config: { warmup_secs: 0, stop_after_secs: 0, significant_figures: 2 } }),
    ).to.not.throw();
    // a blackhole without the benchmark keys only acks and discards
    expect(() => exposed.publish('offramp', { id: 'plain', type: 'blackhole' })).to.not.throw();
    expect(() => exposed.publish('offramp', { id: 'empty', type: 'blackhole', config: {} })).to.not.throw();
    expect(() => exposed.publish('onramp', { id: 'y', type: 'file', config: { source: join(allowed, 'in.json') } })).to.not.throw();
  });

  it('answers 400 over REST naming the field, and stores nothing', async () => {
    const started = await startRuntime(runtimeWith({ allowPaths: [allowed] }));
    try {
      const reply = await call(started.base, 'POST', '/offramp', { body: { id: 'pw', type: 'file', config: { file: '/etc/passwd' } } });
      expect(reply.status).to.equal(400);
      expect(reply.body).to.deep.equal({ error: `config.file: '/etc/passwd' is outside the allowed paths (${allowed})` });
      expect((await call(started.base, 'GET', '/offramp')).body).to.not.include('pw');
    } finally {
      await started.stop();
    }
  });

  it('knows every path-like field of every builtin type (a new one must be confined or listed here as no path)', () => {
    // a URL path; a listener's switch for client certificates; PEM text given inline
    const NOT_PATHS = new Set([
      'offramp rest endpoint.path',
      ...['rest', 'ws', 'tcp', 'otel'].map((type) => `onramp ${type} tls.require_client_cert`),
      'onramp kafka rdkafka_options.ssl.key.pem',
      'offramp kafka rdkafka_options.ssl.key.pem',
    ]);
    const looksLikePath = /path|file|dir|source|location|cert|pem/i;
    const fields = (schema: JsonSchema | undefined, prefix = ''): string[] =>
      Object.entries((schema?.properties ?? {}) as Record<string, JsonSchema>).flatMap(([key, sub]) => [`${prefix}${key}`, ...fields(sub, `${prefix}${key}.`)]);
    const unconfined: string[] = [];
    const known = (schema: JsonSchema | undefined, field: string) => pathFields(schema).some(({ keys }) => keys.join('.') === field);
    for (const kind of ['onramp', 'offramp', 'operator', 'codec'] as const) {
      const registry = kind === 'onramp' || kind === 'offramp' ? rampRegistry(kind) : kind === 'operator' ? BUILTINS.operators : BUILTINS.codecs;
      for (const type of registry.names()) {
        const schema = (registry.get(type) as { configSchema?: JsonSchema }).configSchema;
        for (const field of fields(schema).filter((f) => looksLikePath.test(f))) {
          if (!known(schema, field) && !NOT_PATHS.has(`${kind} ${type} ${field}`)) unconfined.push(`${kind} ${type} ${field}`);
        }
      }
    }
    expect(unconfined).to.deep.equal([]);
  });

  it('tells loopback addresses from the others', () => {
    for (const host of ['127.0.0.1', '127.3.2.1', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) expect(isLoopback(host), host).to.equal(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'example.com', '128.0.0.1']) expect(isLoopback(host), host).to.equal(false);
  });

  it('server run takes --data-dir, --allow-path (repeated) and --allow-exit', () => {
    expect(parseRunArgs(['--data-dir', '/var/lib/eddy', '--allow-path', '/a', '--allow-path', 'b', '--allow-exit'])).to.deep.include({
      dataDir: '/var/lib/eddy',
      allowPaths: ['/a', 'b'],
      allowExit: true,
    });
    expect(parseRunArgs([])).to.deep.include({ allowPaths: [], allowExit: false });
    expect(parseRunArgs([]).dataDir).to.equal(undefined);
    expect(() => parseRunArgs(['--allow-path'])).to.throw('--allow-path needs a value');
  });

  it('server run applies --allow-path to config files too: exit 1 naming the file, the artefact and the field', async () => {
    const config = join(dir, 'flow.yaml');
    writeFileSync(config, `offramp:\n  - { id: writer, type: file, config: { file: "${join(outside, 'out.json')}" } }\n`);
    const run = await runEddy(['server', 'run', '--no-api', '--allow-path', allowed, '-f', config]);
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain(`error: ${config}: offramp 'writer': config.file: '${join(outside, 'out.json')}' is outside the allowed paths (${allowed})`);
  });
});
