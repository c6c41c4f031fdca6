import { separatedLines } from '../shared/separated-lines';

/** lines-null: as `lines`, split on NUL bytes. */
export const linesNull = separatedLines('lines-null', 'As `lines`, split on NUL bytes.', '\0', false);
