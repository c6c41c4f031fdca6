import { unbufferedLines } from '../shared/separated-lines';

/** lines-no-buffer: splits each chunk on `\n` by itself. */
export const linesNoBuffer = unbufferedLines(
  'lines-no-buffer',
  'Splits each chunk on `\\n` by itself, with no buffer across chunks and no length limit.',
  0x0a,
);
