import type { Codec } from '../../codecs/codec';

/**
 * The codec a ramp uses for one frame, reply or event: its own, or one a
 * type names (rest by Content-Type) from the ramp's cache of codecs by name.
 */
export function codecPicker(own: Codec, codecs: ((name: string) => Codec) | undefined, url: string): (name?: string) => Codec {
  return (name) => {
    if (name === undefined || name === own.name) return own;
    if (!codecs) throw new Error(`codec '${name}' is not available to ${url}`);
    return codecs(name);
  };
}
