/**
 * The spec's identifiers (artefact, instance and port ids, docs/rest-api.md)
 * and what is said when one is wrong, in words rather than as the regex.
 */
import { present } from '../core/errors';
import { jsonText } from '../core/json-text';

/** The spec's identifier shape: artefact, instance and port ids. */
export const ID_PATTERN = '^[a-z][a-zA-Z_:]*$';
export const ID_RE = new RegExp(ID_PATTERN);

/**
 * The longest id. The spec sets no bound; without one a 900,000-character id
 * was accepted and made every `GET /status` 1.9 MB. Ids are names a person
 * types: 256 is far beyond any of them.
 */
export const ID_MAX_LENGTH = 256;

/** The spec's rule in words. */
export const ID_RULE = "an id starts with a lowercase letter and holds only letters, '_' and ':'";

/** A value as an error message shows it: quoted, and cut short when long (an over-long id is not echoed whole). */
export function shown(value: unknown, max = 40): string {
  const text = typeof value === 'string' ? value : jsonText(value);
  if (text === undefined) return String(value);
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return typeof value === 'string' ? `'${cut}'` : cut;
}

/** What is wrong with `value` as an id, in words, or undefined when it is one. */
export function idProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return `must be a string; ${ID_RULE}`;
  if (value.length > ID_MAX_LENGTH) return `${shown(value)} is ${value.length} characters long; an id has at most ${ID_MAX_LENGTH}`;
  if (ID_RE.test(value)) return undefined;
  if (value === '') return `is empty; ${ID_RULE}`;
  if (!/[a-z]/.test(value[0])) return `${shown(value)} starts with ${shown(value[0])}; ${ID_RULE}`;
  // not an id, not empty, a lowercase letter first: some character is not one an id may hold
  const bad = present(/[^a-zA-Z_:]/.exec(value), 'a character an id may not hold');
  return `${shown(value)} has ${shown(bad[0])} (character ${bad.index + 1}); ${ID_RULE}`;
}

/**
 * Binding link URLs: `[svc://host]/kind/artefact/instance[/port]`. The spec's
 * pattern is narrower than its own examples, so this one also admits system
 * ids with `::`, the `{placeholder}` instance segment and an optional port.
 */
const SEG = '[a-z][a-zA-Z_:]*';
const INSTANCE_SEG = '[a-zA-Z_:{}]+';
export const BINDING_SRC_PATTERN = `^(svc://[^/]*)?/(onramp|pipeline|offramp)/${SEG}/${INSTANCE_SEG}(/${SEG})?$`;
export const BINDING_DST_PATTERN = `^(svc://[^/]*)?/(pipeline|offramp|onramp)/${SEG}/${INSTANCE_SEG}(/${SEG})?$`;
/** A pipeline's `links` key and target: a node or interface port, or `node/port`. */
export const LINK_KEY_PATTERN = '^[a-zA-Z][A-Za-z0-9_/]*$';

/** The patterns above in words, for the schema errors (messages.ts). */
export const PATTERN_WORDS: Record<string, string> = {
  [BINDING_SRC_PATTERN]: `must be a link URL /kind/artefact/instance[/port], kind one of onramp, pipeline or offramp (${ID_RULE}; the instance may be a {placeholder})`,
  [BINDING_DST_PATTERN]: `must be a link URL /kind/artefact/instance[/port], kind one of pipeline, offramp or onramp (${ID_RULE}; the instance may be a {placeholder})`,
  [LINK_KEY_PATTERN]: "must be a node or interface port, or node/port: a letter, then letters, digits, '_' and '/'",
};
