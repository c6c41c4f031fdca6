import type { Codec } from '../../codecs/codec';
import type { EddyEvent } from '../../core/event';

/**
 * The frame of the event most recently decoded by an onramp, for as long as
 * nothing has had a chance to read or change that event's data.
 *
 * An onramp emits an event and the pipeline and offramps run synchronously,
 * so an event through an empty pipeline reaches its offramp before the next
 * one is decoded: one slot is enough, and nothing is kept per event. An
 * offramp whose codec has the decoding codec's name may write the frame out
 * instead of encoding the value again, when the codec says that encoding
 * would give exactly these bytes (`Codec.roundTrips`). The frame is
 * forgotten the moment the event reaches anything that may read or change
 * its data in place: an operator that is not `forwardsUnchanged` (the
 * pipeline forgets it at that node's input) and a sink (after each send,
 * so a second offramp of a fan-out encodes afresh). Setting `event.data` to
 * another value is caught too: the slot keeps the value it was made with.
 */
let event: EddyEvent | undefined;
let value: unknown;
let frame: Buffer | undefined;
let codecName: string | undefined;

/** The onramp decoded `decoded.data` from `payload` with the codec named `codec`. */
export function rememberFrame(decoded: EddyEvent, payload: Buffer, codec: string): void {
  event = decoded;
  value = decoded.data;
  frame = payload;
  codecName = codec;
}

/** Something that may read or change `e.data` gets hold of it: its frame is no longer its encoding. */
export function forgetFrame(e: EddyEvent): void {
  if (e === event) event = value = frame = codecName = undefined;
}

/** The frame `e` came in as, when `codec` would encode `e.data` to exactly it; otherwise undefined. */
export function untouchedFrame(e: EddyEvent, codec: Codec): Buffer | undefined {
  if (e !== event || e.data !== value || codec.name !== codecName || codec.roundTrips === undefined) return undefined;
  return codec.roundTrips(frame!) ? frame : undefined;
}
