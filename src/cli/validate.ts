import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, loadWorkflow, parseHarnessConfig, preflight, PreflightError, WorkflowError, type StoryBase } from "../pipeline/index.js";
import { git, isWorkTree } from "../workspace/index.js";
import { SchemaValidationError } from "../schema/index.js";
import { COMMAND_OPTIONS, optionHint } from "./options.js";
import { UsageError, type CliIO } from "./usage.js";

const USAGE = "harness validate <workflow.json|harness.yml> [--workflow <file>]";

/** True for the errors that mean "this file is invalid" (as opposed to a harness bug). */
export function isInputError(error: unknown): error is Error {
  return error instanceof SchemaValidationError || error instanceof WorkflowError || error instanceof ConfigError;
}

/** Runs a parseArgs call, turning its complaint about the command line into a {@link UsageError}. */
export function strictArgs<T>(usage: string, parse: () => T, command?: string): T {
  try {
    return parse();
  } catch (error) {
    const code = error !== null && typeof error === "object" && "code" in error ? String(error.code) : "";
    const message = (error as Error).message;
    if (code.startsWith("ERR_PARSE_ARGS")) throw new UsageError(`${message}${command !== undefined ? optionHint(command, message) : ""}`, usage);
    throw error;
  }
}

/**
 * `harness validate`: checks a workflow JSON (schema, stage references, prompt templates) or
 * a `.github/harness.yml` without running anything. Exit 0 valid, 2 invalid or unreadable,
 * with the file and the JSON path of each offending value. What is only about this machine (an
 * agent CLI or interpreter not installed here) is a warning line on stdout, not a failure.
 */
export async function validateCommand(args: string[], io: CliIO): Promise<number> {
  const { positionals, values } = strictArgs(
    USAGE,
    () => parseArgs({ args, options: COMMAND_OPTIONS.validate, allowPositionals: true, strict: true }),
    "validate",
  );
  if (positionals.length !== 1 || positionals[0] === undefined) throw new UsageError("expected exactly one file", USAGE);
  const file = resolve(io.cwd, positionals[0]);
  if (!existsSync(file)) throw new UsageError(`${file} does not exist`, USAGE);
  const kind = /\.ya?ml$/i.test(file) ? "config" : /\.json$/i.test(file) ? "workflow" : undefined;
  if (!kind) throw new UsageError(`cannot tell what ${basename(file)} is: name a .json workflow or a .yml configuration`, USAGE);
  try {
    if (kind === "workflow") {
      const workflow = loadWorkflow(file);
      io.stdout(
        `${file}: valid workflow '${workflow.name}' (${workflow.stages.map((stage) => stage.id).join(" → ")}, up to ${workflow.maxAttempts} attempts)\n`,
      );
    } else {
      const config = parseHarnessConfig(readFileSync(file, "utf8"), file);
      const workflow = loadWorkflow(values.workflow !== undefined ? resolve(io.cwd, values.workflow) : undefined);
      const base = await repositoryOf(file);
      // The operator's allowlist is not known here: names are checked against the App's own credentials only.
      const problems = await preflight({
        config,
        source: file,
        workflow,
        operatorAllow: config.agent.env,
        ...(base ? { base } : {}),
        ...(io.env.PATH !== undefined ? { searchPath: io.env.PATH } : {}),
      });
      // Validating is about the file: the machine that validates (a laptop, a CI job) need not have
      // the agent CLI installed, so a missing program is a warning here; `harness run` refuses it.
      for (const problem of problems.filter((each) => each.machine)) {
        io.stdout(
          `harness validate: warning: ${problem.source}: ${problem.path} ${problem.reason} (about this machine, not the file: \`harness run\` here would refuse to start)\n`,
        );
      }
      const fileProblems = problems.filter((problem) => !problem.machine);
      if (fileProblems.length > 0) throw new PreflightError(fileProblems);
      io.stdout(`${file}: valid harness configuration${base ? ` for ${base.repoDir}` : ""} (workflow '${workflow.name}')\n`);
    }
    return 0;
  } catch (error) {
    if (!isInputError(error)) throw error;
    io.stderr(`harness validate: ${error.message}\n`);
    return 2;
  }
}

/** The repository whose `.github/harness.yml` this is (its HEAD is what a story would start from). */
async function repositoryOf(file: string): Promise<StoryBase | undefined> {
  const folder = dirname(file);
  if (basename(folder) !== ".github") return undefined;
  const candidate = dirname(folder);
  if (!(await isWorkTree(candidate))) return undefined;
  const repoDir = await git(["rev-parse", "--show-toplevel"], { cwd: candidate, readOnly: true });
  return resolve(repoDir) === resolve(candidate) ? { repoDir, ref: "HEAD" } : undefined;
}
