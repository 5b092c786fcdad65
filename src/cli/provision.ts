import { existsSync, statSync } from "node:fs";
import { readBoundedTextSync } from "../files/index.js";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { COMMAND_OPTIONS, optionHint } from "./options.js";
import { harnessHome, logsDir, provisionWorktree, ProvisionConfigError, WorkspaceProvisionError, type ProvisionConfig } from "../workspace/index.js";
import { positiveInteger, UsageError, type CliIO } from "./usage.js";
import { sandboxFromEnv } from "../sandbox/index.js";

const USAGE = "harness provision <worktree> [--provision-cmd <string>] [--timeout-ms <n>] [--log <file>]";

interface ProvisionRequest {
  worktree: string;
  config: ProvisionConfig;
  logPath: string;
}

/** Checks the command line completely before anything runs; throws {@link UsageError}. */
function parseRequest(args: string[], io: CliIO, now: Date): ProvisionRequest {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: COMMAND_OPTIONS.provision,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}${optionHint("provision", (error as Error).message)}`, USAGE);
  }
  const { values, positionals } = parsed;
  if (positionals.length === 0) throw new UsageError("missing <worktree>", USAGE);
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1] ?? ""}'`, USAGE);
  const worktree = resolve(io.cwd, positionals[0] ?? "");
  if (!isDirectory(worktree)) throw new UsageError(`worktree ${worktree} is not a directory`, USAGE);
  // A receipt says a worktree was provisioned: a bare repository or a plain folder is no worktree, and gets none.
  if (!existsSync(join(worktree, ".git")))
    throw new UsageError(`worktree ${worktree} is not a git working tree (a bare repository or a plain folder has no worktree to provision)`, USAGE);

  const config: ProvisionConfig = {};
  if (values["provision-cmd"] !== undefined && values.cmd !== undefined) throw new UsageError("give --provision-cmd or its old name --cmd, not both", USAGE);
  const command = values["provision-cmd"] ?? values.cmd;
  if (command !== undefined) {
    if (command.trim() === "") throw new UsageError("--provision-cmd must not be empty", USAGE);
    config.command = command;
  }
  const timeoutMs = withUsage(() => positiveInteger("--timeout-ms", values["timeout-ms"]));
  if (timeoutMs !== undefined) config.timeoutMs = timeoutMs;
  if (values.log !== undefined && values.log.trim() === "") throw new UsageError("--log must not be empty", USAGE);

  const stamp = now.toISOString().replace(/[:.]/g, "-");
  const logPath = values.log !== undefined ? resolve(io.cwd, values.log) : join(logsDir(harnessHome(io.env)), `provision-${basename(worktree)}-${stamp}.log`);
  return { worktree, config, logPath };
}

/**
 * `harness provision`: provisions a worktree. Exit 0 prints the receipt line; exit 3 is a
 * terminal provisioning failure (class, command, exit code, log path and tail on stderr);
 * bad arguments exit 2 before anything runs.
 */
export async function provisionCommand(args: string[], io: CliIO): Promise<number> {
  const request = parseRequest(args, io, new Date());
  try {
    const outcome = await provisionWorktree({
      worktree: request.worktree,
      config: request.config,
      taskId: `cli-${basename(request.worktree)}`,
      logPath: request.logPath,
      harnessHome: harnessHome(io.env),
      sandbox: sandboxFromEnv(io.env),
    });
    // The receipt lies in the worktree: bounded like every read there (it is one short line).
    io.stdout(readBoundedTextSync(outcome.receiptPath, { maxBytes: 64 * 1024 }));
    return 0;
  } catch (error) {
    if (error instanceof ProvisionConfigError) throw new UsageError(error.message, USAGE);
    if (!(error instanceof WorkspaceProvisionError)) throw error;
    io.stderr(renderFailure(error));
    return 3;
  }
}

/** The failure as a person reads it on a terminal. */
function renderFailure(error: WorkspaceProvisionError): string {
  const lines = [
    `harness provision: ${error.failureClass}: ${error.message}`,
    `  command:   ${error.cmd ?? "(none)"}`,
    `  exit code: ${error.exitCode ?? (error.timedOut ? "none (timed out)" : "none")}`,
    `  log:       ${error.logPath}`,
    "  tail:",
    ...(error.logTail === "" ? ["    (no output)"] : error.logTail.split("\n").map((line) => `    ${line}`)),
  ];
  return `${lines.join("\n")}\n`;
}

/** Adds this command's usage to a shared parser's {@link UsageError}. */
function withUsage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof UsageError && error.usage === undefined) throw new UsageError(error.message, USAGE);
    throw error;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
