import { separatedLines } from '../shared/separated-lines';

/** lines-pipe: as `lines`, split on `|`. */
export const linesPipe = separatedLines('lines-pipe', 'As `lines`, split on `|`.', '|', false);
