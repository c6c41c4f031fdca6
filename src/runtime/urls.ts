import { invalid } from '../core/errors';
import { idProblem, shown } from '../schema/ids';

export const KINDS = ['pipeline', 'onramp', 'offramp', 'binding'] as const;
export type Kind = (typeof KINDS)[number];

export function isKind(value: string): value is Kind {
  return (KINDS as readonly string[]).includes(value);
}

/** A resolved endpoint of a binding link: `/kind/artefact/instance/port`. */
export interface InstancePort {
  kind: Exclude<Kind, 'binding'>;
  artefact: string;
  instance: string;
  port: string;
}

export function instanceUrl(kind: Kind, artefact: string, instance: string): string {
  return `/${kind}/${artefact}/${instance}`;
}

/**
 * Replaces every `{name}` in a link URL by the binding instance's parameters
 * (`instance` is always the instance id). Unlike the original runtime, every
 * parameter applies, not only the last one; a placeholder with no value is an error.
 */
export function substitute(url: string, params: Record<string, string>, where: string): string {
  return url.replace(/\{([^}]*)\}/g, (_m, name: string) => {
    const value = Object.hasOwn(params, name) ? params[name] : undefined; // not one inherited ({constructor})
    if (value === undefined) throw invalid(`${where}: no value for placeholder {${name}} in '${url}'`);
    return value;
  });
}

/** Parses a resolved link URL; the port defaults to `out` at a source and `in` at a destination. */
export function parseLinkUrl(url: string, side: 'source' | 'destination', where: string): InstancePort {
  const path = url.replace(/^svc:\/\/[^/]*/, '');
  const parts = path.split('/');
  if (parts[0] !== '' || parts.length < 4 || parts.length > 5) {
    throw invalid(`${where}: '${url}' is not of the form /kind/artefact/instance[/port]`);
  }
  const [, kind, artefact, instance, port] = parts as [string, string, string, string, string | undefined]; // 4 or 5 parts
  if (kind !== 'onramp' && kind !== 'offramp' && kind !== 'pipeline') {
    throw invalid(`${where}: '${url}': kind must be onramp, offramp or pipeline`);
  }
  for (const [what, value] of [
    ['artefact id', artefact],
    ['instance id', instance],
    ['port', port],
  ] as const) {
    const problem = value === undefined ? undefined : idProblem(value);
    if (problem !== undefined) throw invalid(`${where}: ${shown(url, 120)}: ${what} ${problem}`);
  }
  return { kind, artefact, instance, port: port ?? (side === 'source' ? 'out' : 'in') };
}
