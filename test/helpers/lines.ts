import { existsSync, readFileSync } from 'node:fs';

/**
 * The complete lines of a file another process may still be writing: those
 * up to its last newline. The text after it is a line the writer has not
 * finished (or a read that caught a write half done), never parsed as if it
 * were whole. None when the file does not exist (yet).
 */
export function completeLines(file: string): string[] {
  if (!existsSync(file)) return [];
  // what follows the last newline is the last piece of the split: dropped
  return readFileSync(file, 'utf8').split('\n').slice(0, -1);
}
