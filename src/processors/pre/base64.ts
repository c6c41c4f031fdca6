import { mapPreprocessor } from '../shared/frame-map';
import { preview } from '../shared/options';

// standard alphabet with padding; Buffer.from(…, 'base64') alone would skip bad characters silently
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** base64: decodes each chunk from standard base64; anything else in it is an error. */
export const base64 = mapPreprocessor('base64', 'Decodes each chunk from standard base64 (with padding); anything else is an error.', (chunk) => {
  const text = chunk.toString('latin1');
  if (!BASE64.test(text)) throw new Error(`base64: not standard base64: ${preview(chunk)}`);
  return Buffer.from(text, 'base64');
});
