import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { sandboxFromEnv, SandboxSettingsError, type Sandbox } from "../sandbox/index.js";
import {
  cleanCloneExitCode,
  CleanCloneOptionsError,
  runCleanCloneCheck,
  validateLinkName,
  writeCleanCloneResult,
  type CleanCloneOptions,
} from "../workspace/index.js";
import { positiveInteger, UsageError, type CliIO } from "./usage.js";

const USAGE =
  "harness clean-clone [<repo>] --command <string> [--link <dir>]... [--interpreter <path>] [--depth <n>] [--env <NAME>]... [--provision] [--allow-external-symlinks] [--timeout-ms <n>] [--out <file>]";

const OPTIONS = {
  command: { type: "string" },
  link: { type: "string", multiple: true },
  interpreter: { type: "string" },
  "timeout-ms": { type: "string" },
  out: { type: "string" },
  depth: { type: "string" },
  env: { type: "string", multiple: true },
  provision: { type: "boolean" },
  "allow-external-symlinks": { type: "boolean" },
} as const;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** parseArgs, with its complaints (unknown option, missing value) turned into a {@link UsageError}. */
function readArgs(args: string[]) {
  try {
    return parseArgs({ args, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    // Matched by code, not class: the error may come from another realm (a test VM).
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS")) throw new UsageError((error as Error).message, USAGE);
    throw error;
  }
}

/** Reads the command line into check options; throws {@link UsageError} naming the bad argument. */
function parse(args: string[], io: CliIO): { options: Omit<CleanCloneOptions, "sandbox">; out?: string } {
  const { values, positionals } = readArgs(args);
  if (positionals.length > 1) throw new UsageError(`expected at most one <repo>, got ${positionals.length}`, USAGE);
  if (values.command === undefined || values.command.trim() === "") throw new UsageError("--command is required and must not be empty", USAGE);
  if (values.interpreter === "") throw new UsageError("--interpreter must not be empty", USAGE);
  if (values.out === "") throw new UsageError("--out must not be empty", USAGE);
  const links = values.link?.map((name) => {
    try {
      return validateLinkName(name, "--link");
    } catch (error) {
      if (error instanceof CleanCloneOptionsError) throw new UsageError(`--link ${error.problem} (got ${JSON.stringify(name)})`, USAGE);
      throw error;
    }
  });
  const timeoutMs = positiveInteger("--timeout-ms", values["timeout-ms"]);
  const depth = positiveInteger("--depth", values.depth);
  const envNames = values.env?.map((name) => {
    if (!ENV_NAME.test(name)) throw new UsageError(`--env must name an environment variable (got ${JSON.stringify(name)})`, USAGE);
    return name;
  });
  const options: Omit<CleanCloneOptions, "sandbox"> = {
    repo: resolve(io.cwd, positionals[0] ?? "."),
    command: values.command,
    ...(links ? { links } : {}),
    // A path is resolved against the caller's folder; a bare name is looked up on PATH.
    ...(values.interpreter !== undefined
      ? { interpreter: values.interpreter.includes("/") ? resolve(io.cwd, values.interpreter) : values.interpreter, interpreterFromOperator: true }
      : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(depth !== undefined ? { depth } : {}),
    ...(envNames !== undefined ? { env: { allow: envNames } } : {}),
    ...(values.provision === true ? { provision: {} } : {}),
    ...(values["allow-external-symlinks"] === true ? { allowExternalSymlinks: true } : {}),
  };
  return { options, ...(values.out !== undefined ? { out: resolve(io.cwd, values.out) } : {}) };
}

/**
 * `harness clean-clone`: runs the suite in a fresh checkout of the commit `git add -A && git
 * commit` would make of the working tree (the repository itself is only read). Prints the result JSON (and writes it to `--out`); exits 0 when the suite
 * passed there, 1 when it failed, 2 when the check could not run.
 */
export async function cleanCloneCommand(args: string[], io: CliIO): Promise<number> {
  const { options: asked, out } = parse(args, io);
  let sandbox: Sandbox;
  try {
    sandbox = sandboxFromEnv(io.env);
  } catch (error) {
    if (!(error instanceof SandboxSettingsError)) throw error;
    io.stderr(`harness clean-clone: ${error.message}\n`);
    return 2;
  }
  const result = await runCleanCloneCheck({ ...asked, sandbox });
  io.stdout(`${JSON.stringify(result, null, 2)}\n`);
  if (!result.ran) io.stderr(`harness clean-clone: did not run: ${result.reason ?? "unknown reason"}\n`);
  for (const warning of result.warnings ?? []) io.stderr(`harness clean-clone: warning: ${warning}\n`);
  if (out !== undefined) {
    try {
      await writeCleanCloneResult(out, result);
    } catch (error) {
      io.stderr(`harness clean-clone: could not write --out ${out}: ${error instanceof Error ? error.message : String(error)}\n`);
      return 2;
    }
  }
  return cleanCloneExitCode(result);
}
