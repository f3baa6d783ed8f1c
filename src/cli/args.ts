/** Where a command writes: its output, and what goes to stderr. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** Whether an argument asks for the usage (`--help`, `-h`, `help`): printed, exit 0, nothing done. */
export const asksForHelp = (arg: string | undefined): boolean => arg !== undefined && ['--help', '-h', 'help'].includes(arg);

/** A command line its command cannot read as it was meant: the message names what. */
class OptionError extends Error {}

/**
 * A command's options, each `--flag value` or `--flag=value` (absent: not in the result; without a
 * value: ''). Anything else is refused rather than passed over: an option the command does not
 * know, one given twice, an argument that is no option. Read loosely, `--scopes=ticket:read` or
 * `--scope ticket:read` made a token of full access without a word.
 */
export function parseOptions(args: string[], known: readonly string[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (!known.includes(flag)) throw new OptionError(flag.startsWith('-') ? `unknown option ${flag}` : `unexpected argument ${arg}`);
    if (flag in values) throw new OptionError(`${flag} is given twice`);
    values[flag] = (eq > 0 ? arg.slice(eq + 1) : (args[++i] ?? '')).trim();
  }
  return values;
}

/**
 * A command's options (parseOptions), or null once the refusal is written (`<command>: <what>`,
 * then the usage), for the command to exit 2.
 */
export function readOptions(args: string[], known: readonly string[], io: Io, command: string, usage: string): Record<string, string> | null {
  try {
    return parseOptions(args, known);
  } catch (err) {
    if (!(err instanceof OptionError)) throw err;
    io.err(`${command}: ${err.message}\n${usage}`);
    return null;
  }
}
