import type { JsonSchema } from '../schema/json-schema';

/**
 * A codec turns one frame of bytes into one value and back. Codecs are
 * stateless; a codec instance may be shared by every stream of a ramp.
 */
export interface Codec {
  readonly name: string;
  /**
   * Decodes one frame. Returns `undefined` when the frame holds no value (an
   * influx comment line, say): no event is made. Throws on invalid input;
   * the onramp machinery turns that into an event on the `err` port.
   */
  decode(data: Buffer, ingestNs: bigint): unknown;
  /** Encodes one value into one frame. Throws when the value cannot be encoded. */
  encode(value: unknown): Buffer;
  /**
   * A validator, cheap enough to run on every frame in place of decoding:
   * for ANY bytes `frame`, `true` means that `decode(frame)` does not throw,
   * returns a value other than `undefined`, and `encode(decode(frame))` is
   * byte for byte `frame`. `false` is always safe: it only costs a real
   * decode and encode. With it, an onramp may check a frame instead of
   * decoding it (the value is decoded when first read), and an offramp may
   * write out the frame of an event whose value nothing read or changed
   * instead of encoding the value again (see
   * core/lazy-event.ts). Absent: always decode and encode.
   */
  roundTrips?(frame: Buffer): boolean;
  /**
   * Fetches what the codec needs before the first frame (a schema from a
   * registry), when the ramp starts: `onramp` to decode, `offramp` to encode.
   * A rejection fails the activation with a 400 naming the ramp. Absent:
   * nothing to fetch.
   */
  open?(side: 'onramp' | 'offramp'): Promise<void>;
}

/**
 * How deep containers may nest in a frame a `roundTrips` says yes to. Deeper
 * documents are decoded and encoded afresh: past some depth JSON.stringify,
 * the precise parser and msgpackr (all recursive) run out of stack.
 */
export const MAX_CANONICAL_DEPTH = 100;

/**
 * A codec type, registered by name (`codec: json` in an artefact, or
 * `codec: {name: avro, config: {...}}`); `create` makes an instance per ramp.
 */
export interface CodecType {
  /** the name artefacts use */
  readonly name: string;
  /** one line for the reference (docs/reference.md): what a frame holds and what it decodes to */
  readonly summary?: string;
  /** mime types this codec serves in the builtin mime map */
  readonly mimeTypes?: readonly string[];
  /**
   * The codec's config (`codec: {name, config}`), checked when a ramp is
   * published (a 400 naming `codec.config.FIELD`); its defaults are filled in
   * before `create`. Absent: the codec takes no config.
   */
  readonly configSchema?: JsonSchema;
  /** `config` passed the schema (defaults filled in); absent when the artefact names the codec alone or through codec_map */
  create(config?: Record<string, unknown>): Codec;
}
