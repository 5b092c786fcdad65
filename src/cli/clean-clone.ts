import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { sandboxFromEnv, SandboxSettingsError, type Sandbox } from "../sandbox/index.js";
import {
  cleanCloneExitCode,
  CleanCloneOptionsError,
  runCleanCloneCheck,
  userGitSettings,
  validateLinkName,
  writeCleanCloneResult,
  type CleanCloneOptions,
} from "../workspace/index.js";
import { changedFiles, leftOutFiles, repositoryConfig, verdictLine } from "./clean-clone-extras.js";
import { COMMAND_OPTIONS, optionHint } from "./options.js";
import { positiveInteger, UsageError, type CliIO } from "./usage.js";

const USAGE =
  "harness clean-clone [<repo>] --test-cmd <string> [--link <dir>]... [--no-link] [--interpreter <path>] [--depth <n>] [--env <NAME>]... [--provision] [--allow-external-symlinks] [--timeout-ms <n>] [--out <file>] [--json]";

const OPTIONS = COMMAND_OPTIONS["clean-clone"];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** parseArgs, with its complaints (unknown option, missing value) turned into a {@link UsageError}. */
function readArgs(args: string[]) {
  try {
    return parseArgs({ args, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    // Matched by code, not class: the error may come from another realm (a test VM).
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS"))
      throw new UsageError(`${(error as Error).message}${optionHint("clean-clone", (error as Error).message)}`, USAGE);
    throw error;
  }
}

/** Reads the command line into check options; throws {@link UsageError} naming the bad argument. */
function parse(args: string[], io: CliIO): Parsed {
  const { values, positionals } = readArgs(args);
  if (positionals.length > 1) throw new UsageError(`expected at most one <repo>, got ${positionals.length}`, USAGE);
  if (values["test-cmd"] !== undefined && values.command !== undefined) throw new UsageError("give --test-cmd or its old name --command, not both", USAGE);
  const command = values["test-cmd"] ?? values.command ?? "";
  if ((values["test-cmd"] ?? values.command) !== undefined && command.trim() === "") throw new UsageError("--test-cmd must not be empty", USAGE);
  if (values["no-link"] === true && values.link !== undefined) throw new UsageError("give --link or --no-link, not both", USAGE);
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
    command,
    ...(values["no-link"] === true ? { links: [] } : links ? { links } : {}),
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
  return { options, json: values.json === true, given: given(values), ...(values.out !== undefined ? { out: resolve(io.cwd, values.out) } : {}) };
}

/** Which settings the command line gave (they win over the repository's configuration). */
function given(values: Record<string, unknown>): Set<string> {
  const names = new Set<string>();
  if (values["test-cmd"] !== undefined || values.command !== undefined) names.add("command");
  if (values.link !== undefined || values["no-link"] !== undefined || values.provision !== undefined) names.add("links");
  for (const name of ["interpreter", "depth", "env", "provision", "allow-external-symlinks"]) if (values[name] !== undefined) names.add(name);
  return names;
}

interface Parsed {
  /** The sandbox is resolved by the command itself, once, from the environment. */
  options: Omit<CleanCloneOptions, "sandbox">;
  out?: string;
  json: boolean;
  given: Set<string>;
}

/** Fills what the command line left open from `.github/harness.yml`'s `test` and `clean_clone` keys. */
async function withRepositoryConfig(parsed: Parsed): Promise<Parsed> {
  const { options, given: fromFlags } = parsed;
  const config = await repositoryConfig(options.repo, USAGE);
  const merged: Omit<CleanCloneOptions, "sandbox"> = { ...options };
  if (config !== undefined) {
    const clean = config.cleanClone;
    if (!fromFlags.has("command") && config.test.command !== undefined) merged.command = config.test.command;
    if (!fromFlags.has("links") && clean.link !== undefined) merged.links = clean.link;
    if (!fromFlags.has("interpreter") && clean.interpreter !== undefined) merged.interpreter = clean.interpreter;
    if (!fromFlags.has("depth") && clean.depth !== undefined) merged.depth = clean.depth;
    if (!fromFlags.has("env") && clean.env !== undefined) merged.env = { allow: clean.env };
    if (!fromFlags.has("provision") && !fromFlags.has("links") && clean.provision === true) merged.provision = {};
    if (!fromFlags.has("allow-external-symlinks") && clean.allowExternalSymlinks === true) merged.allowExternalSymlinks = true;
    if (config.test.network === true) merged.network = true;
  }
  if (merged.command.trim() === "") throw new UsageError("--test-cmd is required (or test.command in .github/harness.yml)", USAGE);
  return { ...parsed, options: merged };
}

/**
 * `harness clean-clone`: runs the suite in a fresh checkout of the commit `git add -A && git
 * commit` would make of the working tree (the repository itself is only read). Prints the result JSON (and writes it to `--out`); exits 0 when the suite
 * passed there, 1 when it failed, 2 when the check could not run.
 */
export async function cleanCloneCommand(args: string[], io: CliIO): Promise<number> {
  const { options: asked, out, json } = await withRepositoryConfig(parse(args, io));
  let sandbox: Sandbox;
  try {
    sandbox = sandboxFromEnv(io.env);
  } catch (error) {
    if (!(error instanceof SandboxSettingsError)) throw error;
    io.stderr(`harness clean-clone: ${error.message}\n`);
    return 2;
  }
  // The commit is the one the user's own `git add -A` makes: their global ignore file and line endings count.
  const userGit = await userGitSettings(io.env, io.cwd);
  const options = { ...asked, sandbox };
  const result = await runCleanCloneCheck({ ...options, userGit });
  io.stdout(`${JSON.stringify(result, null, 2)}\n`);
  if (!json) {
    // On stderr, so that stdout stays the JSON a script reads.
    const failed = result.ran && (result.exitCode !== 0 || result.timedOut === true);
    const leftOut = failed ? await leftOutFiles(options.repo, result.linked ?? [], userGit, result.provisioned === true) : [];
    io.stderr(`${verdictLine(result, leftOut, failed ? await changedFiles(options.repo, userGit) : [])}\n`);
    for (const warning of result.warnings ?? []) io.stderr(`harness clean-clone: warning: ${warning}\n`);
  }
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
