import type { CodecType } from './codec';

/** The builtin mime map, from the codecs' own mime types. */
export function builtinMimeMap(codecs: readonly CodecType[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (const codec of codecs) for (const mime of codec.mimeTypes ?? []) map[mime] = codec.name;
  return map;
}

/**
 * The codec name for a Content-Type header: its essence (type/subtype,
 * lowercased, parameters such as `; charset=utf-8` stripped) looked up in
 * `codecMap` (the builtin map with the ramp's `codec_map` over it), else
 * `fallback`, the ramp's configured codec.
 */
export function codecForMime(contentType: string | undefined, codecMap: Readonly<Record<string, string>>, fallback: string): string {
  if (!contentType) return fallback;
  const essence = mimeEssence(contentType);
  if (Object.hasOwn(codecMap, essence)) return codecMap[essence];
  // a user's codec_map may spell a type with capitals; mime types are case-insensitive
  for (const [mime, codec] of Object.entries(codecMap)) if (mime.toLowerCase() === essence) return codec;
  return fallback;
}

export function mimeEssence(contentType: string): string {
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}
