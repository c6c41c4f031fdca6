import { gelfReassembly } from '../shared/gelf-reassembly';

/** gelf-chunking: reassembles chunked GELF datagrams (see shared/gelf-reassembly.ts). */
export const gelfChunking = gelfReassembly('gelf-chunking', (message) => message);
