import { unbufferedLines } from '../shared/separated-lines';

/** lines-cr-no-buffer: splits each chunk on `\r` by itself. */
export const linesCrNoBuffer = unbufferedLines('lines-cr-no-buffer', 0x0d);
