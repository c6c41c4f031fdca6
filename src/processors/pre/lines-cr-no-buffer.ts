import { unbufferedLines } from '../shared/separated-lines';

/** lines-cr-no-buffer: splits each chunk on `\r` by itself. */
export const linesCrNoBuffer = unbufferedLines(
  'lines-cr-no-buffer',
  'Splits each chunk on `\\r` by itself, with no buffer across chunks and no length limit.',
  0x0d,
);
