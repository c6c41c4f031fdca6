import type { Response } from 'express';
import { stringify as toYaml } from 'yaml';

export const JSON_TYPE = 'application/json';
/** YAML goes by three names; a response uses the one the client asked for. */
export const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'] as const;
/** What responses can be, in the server's order of preference (JSON first: it wins ties and `*∕*`). */
export const JSON_OR_YAML: readonly string[] = [JSON_TYPE, ...YAML_TYPES];
export const JSON_ONLY: readonly string[] = [JSON_TYPE];

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

/** The media ranges of an Accept header; a range with a malformed q-value is left out, as if not sent. */
function mediaRanges(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of accept.split(',')) {
    const [range, ...params] = part.split(';');
    const match = /^\s*([^\s/]+)\/([^\s/]+)\s*$/.exec(range);
    if (!match) continue;
    const [type, subtype] = [match[1].toLowerCase(), match[2].toLowerCase()];
    if (type === '*' && subtype !== '*') continue;
    let q = 1;
    const qParam = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    if (qParam !== undefined) {
      q = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(qParam) ? Number(qParam.slice(2)) : NaN;
      if (Number.isNaN(q)) continue;
    }
    ranges.push({ type, subtype, q });
  }
  return ranges;
}

/**
 * The response media type for an Accept header (RFC 9110 §12.5.1): each
 * offered type takes the q-value of the most specific range that matches it
 * (`application/yaml` before `application/*` before `*∕*`), the highest
 * q-value above 0 wins and ties go to the server's order (JSON first). No
 * Accept header accepts anything. When no offer is acceptable, Accept is
 * disregarded and the answer is JSON, as RFC 9110 allows, so that a client
 * asking for something odd still reads the error; unless the client refused
 * JSON outright (`application/json;q=0`, or `*∕*;q=0` with nothing better):
 * then undefined, and the caller answers 406.
 */
export function negotiate(accept: string | undefined, offers: readonly string[]): string | undefined {
  if (accept === undefined || accept.trim() === '') return offers[0];
  const ranges = mediaRanges(accept);
  const qualityOf = (offer: string): number | undefined => {
    const [type, subtype] = offer.split('/');
    let specificity = 0;
    let q: number | undefined;
    for (const r of ranges) {
      const s = r.type === type && r.subtype === subtype ? 3 : r.type === type && r.subtype === '*' ? 2 : r.type === '*' ? 1 : 0;
      if (s > specificity) [specificity, q] = [s, r.q];
    }
    return q;
  };
  let best: string | undefined;
  let bestQ = 0;
  for (const offer of offers) {
    const q = qualityOf(offer) ?? 0;
    if (q > bestQ) [best, bestQ] = [offer, q];
  }
  if (best !== undefined) return best;
  return qualityOf(JSON_TYPE) === 0 ? undefined : JSON_TYPE;
}

export function isYaml(type: string): boolean {
  return (YAML_TYPES as readonly string[]).includes(type);
}

export function send(res: Response, type: string, status: number, body: unknown): void {
  res
    .status(status)
    .type(type)
    .send(isYaml(type) ? toYaml(body) : JSON.stringify(body));
}
