import { separatedLines } from '../shared/separated-lines';

/** lines: splits on `\n` (or the one-byte `separator`), buffered, lines up to `max_length` (1 MiB) bytes. */
export const lines = separatedLines('lines', 'Splits on `\\n` (or the one-byte `separator`), carrying a partial line across chunks.', '\n', true);
