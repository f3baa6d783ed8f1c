/** Where a command writes: its output, and what goes to stderr. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** The value after `--flag`: undefined when the flag is absent, '' when it has no value. */
export function option(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : (args[i + 1] ?? '').trim();
}
