import { asksForHelp, commandHelp } from "./cli/help.js";
import { nearest, optionHint } from "./cli/options.js";
import { UsageError, type CliIO } from "./cli/usage.js";
import { readFileSync } from "node:fs";

/** The package's version, read from its package.json (one folder above both src/ and dist/). */
function packageVersion(): string {
  try {
    const parsed = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: unknown };
    return typeof parsed.version === "string" ? parsed.version : "unknown";
  } catch {
    return "unknown";
  }
}

type Command = (args: string[], io: CliIO) => Promise<number>;

const HELP = `story-harness — the story-harness command line (also installed as \`harness\`)

Usage:
  harness serve                     run the GitHub App (same as npm start)
  harness worker                    run stories from the Redis queue (HARNESS_QUEUE=redis://…)
  harness run [<repo>] --story <file.md> [--agent <preset>|--agent-cmd <template>] [--workflow <file>] [--test-cmd <cmd>] [--continue|--fresh]
  harness provision <worktree> [--provision-cmd <string>] [--timeout-ms <n>] [--log <file>]
  harness clean-clone [<repo>] [--test-cmd <string>] [--link <dir>]... [--no-link] [--provision] [--json] [--out <file>] (and more: --help)
  harness validate <workflow.json|harness.yml> [--workflow <file>]
  harness demo                      the App against a built-in fake GitHub: what a maintainer sees
  harness status [--json]          queued, running, quarantined and undelivered work of HARNESS_HOME (or of every worker on HARNESS_QUEUE)
  harness help
  harness --version                 the version of story-harness
  harness <command> --help          what a command does and its options

Exit codes: 0 success, 1 the checked thing failed, 2 bad arguments or configuration, 3 provisioning failed.
`;

/** Commands are loaded on demand so `harness provision` does not pay for the App's imports. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import("./cli/serve.js")).serveCommand,
  worker: async () => (await import("./cli/worker.js")).workerCommand,
  run: async () => (await import("./cli/run.js")).runCommand,
  provision: async () => (await import("./cli/provision.js")).provisionCommand,
  "clean-clone": async () => (await import("./cli/clean-clone.js")).cleanCloneCommand,
  validate: async () => (await import("./cli/validate.js")).validateCommand,
  demo: async () => (await import("./cli/demo.js")).demoCommand,
  status: async () => (await import("./cli/status.js")).statusCommand,
};

/** Runs the `harness` command line and returns the process exit code. */
export async function main(argv: string[], io: CliIO = defaultIO()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    io.stdout(HELP);
    return 0;
  }
  if (name === "--version" || name === "-V" || name === "version") {
    io.stdout(`story-harness ${packageVersion()}\n`);
    return 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    const guess = nearest(name, Object.keys(COMMANDS));
    io.stderr(`harness: unknown command '${name}'${guess !== undefined ? ` (did you mean '${guess}'?)` : ""}\n\n${HELP}`);
    return 2;
  }
  if (asksForHelp(rest)) {
    io.stdout(commandHelp(name) ?? `Usage: see 'harness help'\n\n${HELP}`);
    return 0;
  }
  try {
    return await (
      await load()
    )(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`harness ${name}: ${error.message}\n${error.usage ? `usage: ${error.usage}\n` : ""}`);
      return 2;
    }
    if (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS")) {
      io.stderr(`harness ${name}: ${error.message}${optionHint(name, error.message)}\n`);
      return 2;
    }
    throw error;
  }
}

/** The process's own streams, directory and environment. */
export function defaultIO(): CliIO {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    cwd: process.cwd(),
    env: process.env,
  };
}
