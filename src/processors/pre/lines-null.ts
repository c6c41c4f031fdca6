import { separatedLines } from '../shared/separated-lines';

/** lines-null: as `lines`, split on NUL bytes. */
export const linesNull = separatedLines('lines-null', 0x00, false);
