import { gelfReassembly } from '../shared/gelf-reassembly';

/**
 * gelf-chunking-tcp: as gelf-chunking, then strips the NUL byte that ends a
 * GELF message on TCP (only when it is there: the original dropped the last
 * byte blindly).
 */
export const gelfChunkingTcp = gelfReassembly(
  'gelf-chunking-tcp',
  'As gelf-chunking, then strips the NUL byte that ends a GELF message on TCP (when there is one).',
  (message) => (message.length > 0 && message[message.length - 1] === 0 ? message.subarray(0, -1) : message),
);
