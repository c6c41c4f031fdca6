/**
 * The value after a command-line flag, `args[index]`. A missing or empty one
 * is an error naming the flag (`<prefix><flag> needs a value`), so every
 * command reports it the same way.
 */
export function flagValue(args: string[], index: number, flag: string, prefix = ''): string {
  const value = args[index];
  if (value === undefined || value === '') throw new Error(`${prefix}${flag} needs a value`);
  return value;
}
