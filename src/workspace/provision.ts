/**
 * Provisioning a worktree: install its dependencies before any seat or gate enters, leave a
 * receipt, and turn a terminal failure into blocked infrastructure.
 */
import { appendFileSync, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { succeeded, type EnvSpec, type ExecResult } from "../exec/index.js";
import { sandboxFromEnv, type Sandbox } from "../sandbox/index.js";
import { cacheDir, harnessHome as defaultHarnessHome } from "./paths.js";
import { validateProvisionConfig, type ProvisionConfig, type ProvisionSettings } from "./provision-config.js";
import { WorkspaceProvisionError } from "./provision-error.js";
import { excludeReceipt, provisionReceiptPath, PROVISION_RECEIPT, readReceipt, writeReceipt, type ProvisionReceipt } from "./provision-receipt.js";
import { resolveProvisionCommand } from "./provision-resolve.js";

/** The package managers whose caches provisioning may write. */
const CACHE_TOOLS = ["npm", "pnpm", "yarn", "cargo"] as const;

/** Attempts of one provisioning command: the first, and one retry. */
const MAX_ATTEMPTS = 2;

export interface ProvisionArgs {
  worktree: string;
  config?: ProvisionConfig;
  taskId: string;
  /** Provisioning output goes here, and only here (both attempts append). */
  logPath: string;
  /** The harness data directory holding the shared caches; `harnessHome()` by default. */
  harnessHome?: string;
  now?: () => Date;
  /** Where the command runs; the operator's sandbox (`HARNESS_SANDBOX`) when absent. */
  sandbox?: Sandbox;
}

export interface ProvisionOutcome {
  receiptPath: string;
  receipt: ProvisionReceipt;
  /** Times the command ran: 0 for a skip or a no-op rung, 1, or 2 after a retry. */
  attempts: number;
  /** True when a receipt already existed and nothing ran. */
  skipped: boolean;
}

/**
 * The variables that point every package manager at the caches under `home`, so that the
 * second worktree of a repository installs from what the first downloaded.
 */
export function provisionCacheEnv(home: string): Record<string, string> {
  return {
    npm_config_cache: cacheDir(home, "npm"),
    // Metadata already in the shared cache is used without asking the registry again, which
    // is what makes a second worktree warm when a lockfile omits tarball URLs.
    npm_config_prefer_offline: "true",
    // pnpm puts its store in $PNPM_HOME/store unless a repository's .npmrc says otherwise.
    PNPM_HOME: cacheDir(home, "pnpm"),
    YARN_CACHE_FOLDER: cacheDir(home, "yarn"),
    CARGO_HOME: cacheDir(home, "cargo"),
    // Installing must not depend on the advisory service or print funding notices into the log.
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
}

/**
 * Provisions `worktree` unless it holds a receipt. The configuration is checked before
 * anything runs (`ProvisionConfigError`). The resolved command runs from the worktree root
 * with the configured timeout; a failure or timeout is retried once with the same command and
 * log path, after every process of the first attempt is gone. A second failure throws
 * {@link WorkspaceProvisionError} and writes no receipt. No-op rungs (Cargo, none) still
 * write a receipt.
 */
export async function provisionWorktree(args: ProvisionArgs): Promise<ProvisionOutcome> {
  const settings = validateProvisionConfig(args.config);
  const receiptPath = provisionReceiptPath(args.worktree);
  if (!isDirectory(args.worktree)) {
    throw new WorkspaceProvisionError(`worktree ${args.worktree} does not exist or is not a directory`, {
      cmd: null,
      exitCode: null,
      logPath: args.logPath,
      logTail: "",
      taskId: args.taskId,
    });
  }
  const existing = readReceipt(args.worktree);
  if (existing) return { receiptPath, receipt: existing, attempts: 0, skipped: true };

  const resolved = resolveProvisionCommand({ worktree: args.worktree, config: settings });
  // Excluded before the receipt exists, so no `git status` ever lists it.
  await excludeReceipt(args.worktree);
  const now = args.now ?? (() => new Date());
  const started = performance.now();
  const attempts = resolved.argv ? await runWithRetry(args, settings, resolved.cmd, resolved.argv) : 0;
  const receipt: ProvisionReceipt = { cmd: resolved.cmd, exitCode: 0, at: now().toISOString(), durationMs: Math.round(performance.now() - started) };
  writeReceipt(args.worktree, receipt);
  return { receiptPath, receipt, attempts, skipped: false };
}

/** Runs the command, once more after a failure; returns the attempts it took or throws. */
async function runWithRetry(args: ProvisionArgs, settings: ProvisionSettings, cmd: string | null, argv: string[]): Promise<number> {
  const home = args.harnessHome ?? defaultHarnessHome();
  const sandbox = args.sandbox ?? sandboxFromEnv();
  let env: EnvSpec;
  try {
    env = childEnv(home, settings.env);
  } catch (error) {
    const reason = `cannot create the package-manager caches under ${home}: ${(error as Error).message}`;
    throw new WorkspaceProvisionError(reason, { cmd, exitCode: null, logPath: args.logPath, logTail: "", taskId: args.taskId });
  }
  // A log that cannot be written is broken infrastructure too, reported the same way.
  const note = (line: string): void => {
    try {
      mkdirSync(dirname(args.logPath), { recursive: true });
      appendFileSync(args.logPath, `# harness provision: ${line}\n`);
    } catch (error) {
      throw new WorkspaceProvisionError(`cannot write the provisioning log ${args.logPath}: ${(error as Error).message}`, {
        cmd,
        exitCode: null,
        logPath: args.logPath,
        logTail: "",
        taskId: args.taskId,
      });
    }
  };
  for (let attempt = 1; ; attempt += 1) {
    note(`attempt ${attempt}/${MAX_ATTEMPTS} in ${args.worktree}: ${cmd ?? ""}`);
    // The run resolves only once every process of the attempt is gone, so attempts never overlap.
    // Sandboxed with the network (registries), writing only the worktree and the caches.
    const result = await sandbox.run(argv, { cwd: args.worktree, env, timeoutMs: settings.timeoutMs, logPath: args.logPath }, {
      purpose: "provision",
      network: true,
      writable: [args.worktree, ...CACHE_TOOLS.map((tool) => cacheDir(home, tool))],
    });
    if (succeeded(result)) return attempt;
    const why = describeFailure(result, settings.timeoutMs);
    note(`attempt ${attempt} ${why}`);
    if (attempt >= MAX_ATTEMPTS) {
      throw new WorkspaceProvisionError(`provisioning ${args.worktree} failed after ${attempt} attempts: ${cmd ?? ""} ${why} (log: ${args.logPath})`, {
        cmd,
        exitCode: result.exitCode,
        logPath: args.logPath,
        logTail: result.tail,
        taskId: args.taskId,
        timedOut: result.timedOut,
        attempts: attempt,
      });
    }
  }
}

/**
 * Admission check before a seat or gate enters `worktree`: throws
 * {@link WorkspaceProvisionError} when it holds no valid receipt. It never provisions.
 */
export function assertProvisioned(worktree: string, phase: string): void {
  if (readReceipt(worktree) !== undefined) return;
  throw new WorkspaceProvisionError(`${phase}: worktree ${worktree} is not provisioned (no valid ${PROVISION_RECEIPT}); provision it before entering`, {
    cmd: null,
    exitCode: null,
    logPath: "",
    logTail: "",
    phase,
  });
}

/** The provisioning child's environment: the exec allowlist, the caches, the config's names. */
function childEnv(home: string, configEnv: EnvSpec): EnvSpec {
  const caches = provisionCacheEnv(home);
  for (const tool of CACHE_TOOLS) mkdirSync(cacheDir(home, tool), { recursive: true });
  const spec: EnvSpec = { set: { ...caches, ...configEnv.set } };
  if (configEnv.allow) spec.allow = configEnv.allow;
  return spec;
}

function describeFailure(result: ExecResult, timeoutMs: number): string {
  if (result.timedOut) return `timed out after ${timeoutMs} ms`;
  if (result.spawnError !== undefined) return `could not start (${result.spawnError})`;
  if (result.signal) return `was ended by ${result.signal}`;
  return `exited with code ${result.exitCode ?? "none"}`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
