/**
 * The value after a command-line flag, `args[index]`. A missing one is an
 * error naming the flag (`<prefix><flag> needs a value`), so every command
 * reports it the same way; an empty one is for the flag's own check.
 */
export function flagValue(args: string[], index: number, flag: string, prefix = ''): string {
  const value = args[index];
  if (value === undefined) throw new Error(`${prefix}${flag} needs a value`);
  return value;
}
