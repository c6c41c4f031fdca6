import { unbufferedLines } from '../shared/separated-lines';

/** lines-no-buffer: splits each chunk on `\n` by itself. */
export const linesNoBuffer = unbufferedLines('lines-no-buffer', 0x0a);
