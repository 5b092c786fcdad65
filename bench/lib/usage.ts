/**
 * What `npm run bench -- <name> --help` prints, and the one line a mistyped option gets: a
 * benchmark's usage is the `npm run bench -- <name> …` line of its description (the comment
 * that opens its file), and a bad option is told by node's own `parseArgs` error, first
 * sentence only, instead of a stack trace.
 */

/** The usage line of benchmark `name` from its source: the description's `npm run bench -- <name>` line, or the bare form. */
export function usageOf(name: string, source: string): string {
  const description = /^\/\*\*[\s\S]*?\*\//.exec(source.trimStart())?.[0] ?? "";
  const prefix = `npm run bench -- ${name}`;
  for (const line of description.split("\n")) {
    const text = line
      .replace(/^\s*\*\s?/, "")
      .replace(/^Run:\s*/, "")
      .trim();
    if (text === prefix || text.startsWith(`${prefix} `)) return text;
  }
  return prefix;
}

/** True when `args` ask for help (before a `--`, after which arguments are positional). */
export function asksForHelp(args: readonly string[]): boolean {
  const options = args.includes("--") ? args.slice(0, args.indexOf("--")) : args;
  return options.includes("--help") || options.includes("-h");
}

/** The one-line message of a command-line parsing error of node's `parseArgs` (unknown option, missing value…); undefined for any other error. */
export function argumentError(error: unknown): string | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code !== "string" || !code.startsWith("ERR_PARSE_ARGS_") || typeof message !== "string") return undefined;
  // "Unexpected argument 'x'. This command does not take positional arguments": the first sentence names the argument.
  const line = message.split("\n")[0] ?? "";
  const end = line.indexOf(". ");
  return end === -1 ? line : line.slice(0, end + 1);
}
