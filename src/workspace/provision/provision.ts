/**
 * Provisioning a worktree: install its dependencies before any seat or gate enters, leave a
 * receipt, and turn a terminal failure into blocked infrastructure.
 */
import { appendFileSync, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { succeeded, type EnvSpec, type ExecResult } from "../../exec/index.js";
import type { Sandbox, SandboxStep } from "../../sandbox/index.js";
import { cacheDir, harnessHome as defaultHarnessHome } from "../paths.js";
import { validateProvisionConfig, type ProvisionConfig, type ProvisionSettings } from "./config.js";
import { WorkspaceProvisionError } from "./error.js";
import { excludeReceipt, provisionReceiptPath, PROVISION_RECEIPT, readReceipt, writeReceipt, type ProvisionReceipt } from "./receipt.js";
import { resolveProvisionCommand, type ProvisionSource, type ResolvedProvision } from "./resolve.js";
import { hasSnapshot, linkSnapshot, planSnapshot, saveSnapshot, type SnapshotPlan } from "./snapshot.js";

/** The package managers whose caches provisioning may write. */
const CACHE_TOOLS = ["npm", "pnpm", "yarn", "cargo", "pip", "uv", "poetry"] as const;

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
  /** Where the command runs: the operator's sandbox, resolved once at the edge (app.ts, cli/). */
  sandbox: Sandbox;
  /** Link a matching dependency snapshot instead of installing (default true; see provision-snapshot). */
  snapshots?: boolean;
}

export interface ProvisionOutcome {
  receiptPath: string;
  receipt: ProvisionReceipt;
  /** Times the command ran: 0 for a skip or a no-op rung, 1, or 2 after a retry. */
  attempts: number;
  /** True when a receipt already existed and nothing ran. */
  skipped: boolean;
  /** Set when `node_modules` came from a snapshot (`linked`) or was kept as one (`saved`). */
  snapshot?: { key: string; action: "linked" | "saved" };
  /** The rung that decided (absent for a skip: the receipt was already there). */
  source?: ProvisionSource;
  /** What a reader should know about the install (a lock whose tool is missing, installed with pip instead). */
  note?: string;
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
    // Python: wheels and downloads shared between worktrees; poetry's environment in the worktree (.venv), like the other rungs'.
    PIP_CACHE_DIR: cacheDir(home, "pip"),
    UV_CACHE_DIR: cacheDir(home, "uv"),
    POETRY_CACHE_DIR: cacheDir(home, "poetry"),
    POETRY_VIRTUALENVS_IN_PROJECT: "true",
    PIP_DISABLE_PIP_VERSION_CHECK: "1",
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

  // uv and poetry are looked for where the install will look for them: on the provisioning PATH.
  const searchPath = settings.env.set?.PATH ?? process.env.PATH ?? "";
  const resolved = resolveProvisionCommand({ worktree: args.worktree, config: settings, searchPath });
  const about = { source: resolved.source, ...(resolved.argv !== null && resolved.note !== undefined ? { note: resolved.note } : {}) };
  // Excluded before the receipt exists, so no `git status` ever lists it.
  await excludeReceipt(args.worktree);
  const now = args.now ?? (() => new Date());
  const started = performance.now();
  const finish = (cmd: string | null): ProvisionReceipt => {
    const receipt: ProvisionReceipt = { cmd, exitCode: 0, at: now().toISOString(), durationMs: Math.round(performance.now() - started) };
    writeReceipt(args.worktree, receipt);
    return receipt;
  };
  // No-op rungs run nothing, so they need no sandbox (nor valid sandbox settings).
  if (resolved.argv === null) return { receiptPath, receipt: finish(null), attempts: 0, skipped: false, ...about };
  if (about.note !== undefined) appendNote(args.logPath, about.note);

  const home = args.harnessHome ?? defaultHarnessHome();
  const sandbox = args.sandbox;
  const plan = await snapshotPlan(args, resolved, home, sandbox);
  if (!plan.eligible) appendNote(args.logPath, `no dependency snapshot: ${plan.reason}`);
  if (hasSnapshot(plan)) {
    try {
      await linkSnapshot(plan, args.worktree);
      // The receipt keeps its pinned keys; its command says where the tree came from.
      const receipt = finish(`${resolved.cmd} (linked from snapshot ${plan.key.slice(0, 12)})`);
      return { receiptPath, receipt, attempts: 0, skipped: false, snapshot: { key: plan.key, action: "linked" }, ...about };
    } catch (error) {
      appendNote(args.logPath, `snapshot ${plan.key} could not be linked, installing instead: ${(error as Error).message}`);
    }
  }
  const attempts = await runWithRetry(args, settings, resolved.cmd, resolved.argv, home, sandbox);
  const receipt = finish(resolved.cmd);
  if (plan.eligible && (await saveSnapshot(plan, args.worktree).catch(() => false))) {
    return { receiptPath, receipt, attempts, skipped: false, snapshot: { key: plan.key, action: "saved" }, ...about };
  }
  return { receiptPath, receipt, attempts, skipped: false, ...about };
}

/**
 * Whether this install may use or leave a snapshot. Never without a sandbox when the App is
 * root: unsandboxed repository code would run as root and could write the shared read-only files.
 */
async function snapshotPlan(
  args: ProvisionArgs,
  resolved: Extract<ResolvedProvision, { argv: string[] }>,
  home: string,
  sandbox: Sandbox,
): Promise<SnapshotPlan> {
  if (args.snapshots === false) return { eligible: false, reason: "snapshots are off" };
  // Stryker disable next-line OptionalChaining: getuid exists on every POSIX platform, and the sandbox needs Linux
  if (!sandbox.settings.enabled && process.getuid?.() === 0) return { eligible: false, reason: "unsandboxed as root" };
  try {
    return await planSnapshot(args.worktree, resolved, home);
  } catch (error) {
    return { eligible: false, reason: (error as Error).message };
  }
}

function appendNote(logPath: string, line: string): void {
  try {
    mkdirSync(dirname(logPath), { recursive: true });
    appendFileSync(logPath, `# harness provision: ${line}\n`);
  } catch {
    // The note is a courtesy; the install that follows reports a broken log itself.
  }
}

/** Runs the command, once more after a failure; returns the attempts it took or throws. */
async function runWithRetry(args: ProvisionArgs, settings: ProvisionSettings, cmd: string, argv: string[], home: string, sandbox: Sandbox): Promise<number> {
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
  // Sandboxed with the network (registries), writing only the worktree and the caches.
  // Stryker disable next-line StringLiteral: the sandbox never reads a step's purpose
  const step: SandboxStep = { purpose: "provision", network: true, writable: [args.worktree, ...CACHE_TOOLS.map((tool) => cacheDir(home, tool))] };
  for (let attempt = 1; ; attempt += 1) {
    note(`attempt ${attempt}/${MAX_ATTEMPTS} in ${args.worktree}: ${cmd}`);
    // The run resolves only once every process of the attempt is gone, so attempts never overlap.
    const result = await sandbox.run(argv, { cwd: args.worktree, env, timeoutMs: settings.timeoutMs, logPath: args.logPath }, step);
    if (succeeded(result)) return attempt;
    const why = describeFailure(result, settings.timeoutMs);
    note(`attempt ${attempt} ${why}`);
    if (attempt >= MAX_ATTEMPTS) {
      throw new WorkspaceProvisionError(`provisioning ${args.worktree} failed after ${attempt} attempts: ${cmd} ${why} (log: ${args.logPath})`, {
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
  return { set: { ...caches, ...configEnv.set }, allow: configEnv.allow };
}

function describeFailure(result: ExecResult, timeoutMs: number): string {
  if (result.timedOut) return `timed out after ${timeoutMs} ms`;
  if (result.spawnError !== undefined) return `could not start (${result.spawnError})`;
  if (result.signal) return `was ended by ${result.signal}`;
  // exec gives a null exit code only with a timeout, a spawn error or a signal, all handled above.
  return `exited with code ${result.exitCode}`;
}

function isDirectory(path: string): boolean {
  // On one line so the mark reaches the catch (the try's own block is pinned by the missing-worktree tests).
  // Stryker disable next-line BlockStatement: an empty catch answers undefined, which the one caller reads as false
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
