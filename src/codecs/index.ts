import type { CodecType } from './codec';
import { json } from './json';
import { nullCodec } from './null';
import { string } from './string';

/** The builtin codecs. Adding a codec is one file plus one line here. */
export const builtinCodecs: readonly CodecType[] = [json, string, nullCodec];

/** The builtin mime map, from the codecs' own mime types. */
export function builtinMimeMap(codecs: readonly CodecType[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (const codec of codecs) for (const mime of codec.mimeTypes ?? []) map[mime] = codec.name;
  return map;
}
