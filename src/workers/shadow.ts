/**
 * The primary's types under `--workers N`. The primary runs every
 * activation through its own Runtime, so a publish or an activation is
 * checked exactly as in one process (schemas, links, ports, conflicts,
 * the store), but its instances must not touch the world: no socket bound,
 * no file opened, no write-ahead log. These are the same types (names,
 * schemas, checks, placement) with `create` replaced: sources that never
 * emit, sinks that drop, and a WAL node that only forwards.
 */
import { NEVER, identity } from '../core/rx';
import { Registries } from '../runtime/registries';

export function shadowRegistries(real: Registries = Registries.withBuiltins()): Registries {
  const shadow = new Registries();
  for (const name of real.onramps.names()) shadow.onramps.register(name, { ...real.onramps.get(name), create: () => ({ frames: NEVER }) });
  for (const name of real.offramps.names()) shadow.offramps.register(name, { ...real.offramps.get(name), create: () => ({ send: () => undefined }) });
  for (const name of real.operators.names()) {
    const type = real.operators.get(name);
    // the only operator that opens something when built: the workers own its directory
    shadow.operators.register(name, name === 'qos::wal' ? { ...type, create: () => identity } : type);
  }
  for (const name of real.codecs.names()) shadow.codecs.register(name, real.codecs.get(name));
  for (const name of real.preprocessors.names()) shadow.preprocessors.register(name, real.preprocessors.get(name));
  for (const name of real.postprocessors.names()) shadow.postprocessors.register(name, real.postprocessors.get(name));
  return shadow;
}
