import { gelfReassembly } from '../shared/gelf-reassembly';

/** gelf-chunking: reassembles chunked GELF datagrams (see shared/gelf-reassembly.ts). */
export const gelfChunking = gelfReassembly(
  'gelf-chunking',
  'Reassembles chunked GELF datagrams; a datagram without the chunk magic passes as a whole message.',
  (message) => message,
);
