/**
 * The sandbox every process that runs repository code goes through: provisioning, agents,
 * the suite gate and the clean-clone suite. A step runs under bubblewrap (through `src/exec`,
 * which runs `bwrap`) with its own uid, pids, ipc, hostname and, unless the step needs it,
 * network; it sees the system read-only, a fresh private HOME and TMPDIR, and only the
 * folders the step names. Limits apply inside (processes, data memory, no core files); the
 * wall time is exec's timeout, which ends bwrap and with it every process of the step.
 */
import { appendFileSync, chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { AGENT_IDLE, currentStepScope, exec, watchIdle, type ExecOptions, type ExecResult, type IdleWatch } from "../exec/index.js";
import { bwrapArgs, hostSystemEntries, type SandboxView, type SystemEntry } from "./bwrap-args.js";
import { gitReadPaths, guardGitLink, isInside } from "./git-view.js";
import { removeOrphans } from "./orphans.js";
import { etcSecretMasks } from "./secret-files.js";
import { createPidsCgroup, enterCgroupArgv, removePidsCgroup, removeStalePidsCgroups } from "./pids-cgroup.js";
import { sandboxSettingsFromEnv, type SandboxSettings } from "./settings.js";
import { findNetTools, type NetTools } from "./net-launch.js";
import { prepareNetStep, warmNetStep, type NetPolicy, type NetStep, type SpareSpace } from "./net-step.js";
import { holdQuiet, type QuietHold } from "./net-spares.js";
import type { Resolve } from "./egress-proxy.js";
import { findProgramIn } from "./programs.js";
import { programView, refusalOf, stepView, type ProgramViewHost } from "./program-view.js";
import { hostRustupHome, rustupHomeForStep } from "./rustup.js";

/** What one step is, what it may reach, and whether it has the network. */
export interface SandboxStep {
  purpose: "provision" | "agent" | "suite" | "clean-clone";
  /** On for provisioning and agents (registries, model APIs); off for suites unless `test.network`. */
  network: boolean;
  /** Folders the step writes besides its private HOME and TMPDIR: the worktree (or clone), its artifact folder, the caches. */
  writable: readonly string[];
  /** Folders or files it only reads (a prompt file, the target a clean clone links into). */
  readable?: readonly string[];
}

/** An exec result, and the policy the step ran under. */
export interface SandboxedResult extends ExecResult {
  sandboxed: boolean;
  network: boolean;
  /** Which network: none, its own namespace (direct or through the egress proxy), or the host's. */
  net: NetPolicy;
}

/** The prefix of a step's scratch folder (HOME and TMPDIR): `harness-sandbox-<pid>-`. */
export const SCRATCH_PREFIX = "harness-sandbox-";
/**
 * How long at most an agent holds back work the App put off (ending the last step's spare
 * namespace, making the next): until it idles on its model, or ends (and no agent starts in the
 * gap after it, net-spares.ts), or this passed. An agent busy this long (a suite it runs) lets
 * it run beside it rather than hold it for its whole seat.
 */
export const AGENT_QUIET_MAX_MS = 10_000;

/** What of the host a step never sees even where a visible folder holds it. */
export function defaultMasks(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): { path: string; directory: boolean }[] {
  // The App's own folder, and the host's secrets of /etc (shadow copies, host keys, anything only root may read).
  const masks = [...etcSecretMasks(), { path: cwd, directory: true }];
  if (env.PRIVATE_KEY_PATH) masks.push({ path: resolve(cwd, env.PRIVATE_KEY_PATH), directory: false });
  if (env.HARNESS_HOME) masks.push({ path: resolve(env.HARNESS_HOME), directory: true });
  return masks;
}

/** The host as the sandbox shows it. */
export interface HostView {
  system: readonly SystemEntry[];
  masked: readonly { path: string; directory: boolean }[];
  /** Where steps' scratch folders are made. */
  scratchRoot: string;
  /** The bubblewrap program, and prlimit (found on the App's PATH: a step's PATH may be anything). */
  bwrap: string;
  prlimit: string;
  /** Whether a step gets a pids cgroup where the host allows one (by default when the App is root). */
  pidsCgroups: boolean;
  /** The programs that give a networked step its own namespace, or what is missing for them. */
  netTools: NetTools | { missing: string[] };
  /** How host names of `HARNESS_NET_ALLOW` and of the egress proxy are resolved (the system's by default). */
  resolve?: Resolve;
  /** The user's home, never shown to a step whole (a tool installed under it may be: program-view.ts). */
  home: string;
  /** Where rustup keeps its toolchains (`RUSTUP_HOME`, by default `<home>/.rustup`): read by a step running a rustup proxy. */
  rustupHome: string;
}

/** Runs steps under the sandbox described by `settings`. */
export class Sandbox {
  private readonly host: HostView;
  /** Called when a step's sandbox itself could not start (the probe's cached answer is then stale). */
  private readonly startFailureListeners = new Set<() => void>();

  constructor(
    readonly settings: SandboxSettings,
    host: Partial<HostView> = {},
  ) {
    const home = host.home ?? (process.env.HOME !== undefined && process.env.HOME !== "" ? process.env.HOME : homedir());
    this.host = {
      system: host.system ?? hostSystemEntries(),
      masked: host.masked ?? defaultMasks(),
      scratchRoot: host.scratchRoot ?? tmpdir(),
      bwrap: host.bwrap ?? findProgram("bwrap", process.env.PATH ?? "") ?? "bwrap",
      prlimit: host.prlimit ?? findProgram("prlimit", process.env.PATH ?? "") ?? "/usr/bin/prlimit",
      // Only root needs one: the kernel applies RLIMIT_NPROC to every other user.
      pidsCgroups: host.pidsCgroups ?? process.getuid?.() === 0,
      netTools: host.netTools ?? findNetTools(process.env.PATH ?? ""),
      ...(host.resolve ? { resolve: host.resolve } : {}),
      home,
      rustupHome: host.rustupHome ?? hostRustupHome(process.env, home),
    };
  }

  /** The programs networked steps' namespaces are made with, or what is missing (for the probe). */
  get netTools(): NetTools | { missing: string[] } {
    return this.host.netTools;
  }

  /** The programs every sandboxed step is launched with, and whether it gets a pids cgroup (what the probe's answer depends on). */
  get launchers(): { bwrap: string; prlimit: string; pidsCgroups: boolean } {
    return { bwrap: this.host.bwrap, prlimit: this.host.prlimit, pidsCgroups: this.host.pidsCgroups };
  }

  /**
   * Calls `listener` whenever a sandboxed step could not start because bubblewrap could not
   * (not spawned, or it refused to make its namespaces). Returns the function that unsubscribes.
   */
  onStartFailure(listener: () => void): () => void {
    this.startFailureListeners.add(listener);
    return () => this.startFailureListeners.delete(listener);
  }

  /** The network a step with `network` runs with under these settings. */
  netPolicyOf(network: boolean): NetPolicy {
    if (!network) return "none";
    if (!this.settings.enabled || this.settings.net.mode === "host") return "host";
    return this.settings.net.egressAllow.length > 0 ? "egress" : "own";
  }

  /**
   * Makes the namespaces of the next `steps` networked steps ahead of them (a worktree's
   * provisioning, then the story's first agent), so that each joins one instead of making its
   * own on its critical path. Nothing for a step without its own namespace; never throws.
   */
  async warmNetwork(steps = 1): Promise<void> {
    if (this.netPolicyOf(true) !== "own") return;
    const tools = this.host.netTools;
    if ("missing" in tools) return;
    await warmNetStep(this.settings.net, tools, this.spareSpace(), steps, this.host.resolve).catch(() => undefined);
  }

  /** Where this process's spare namespaces are made (named so a killed App's leftovers are removed like a step's). */
  private spareSpace(refillWhenIdle = false): SpareSpace {
    return { scratchRoot: this.host.scratchRoot, prefix: `${SCRATCH_PREFIX}${process.pid}-spare-`, refillWhenIdle };
  }

  /**
   * Runs `argv` as `step`. The result says whether it ran sandboxed and with the network.
   * With the sandbox off (`HARNESS_SANDBOX=off`) it still gets a private HOME and TMPDIR,
   * but nothing else is contained.
   */
  async run(argv: readonly string[], options: ExecOptions, step: SandboxStep): Promise<SandboxedResult> {
    const scratch = mkdtempSync(join(this.host.scratchRoot, `${SCRATCH_PREFIX}${process.pid}-`));
    const home = join(scratch, "home");
    const tmp = join(scratch, "tmp");
    mkdirSync(home);
    mkdirSync(tmp);
    const restores = step.writable.map((dir) => guardGitLink(dir));
    const set: Record<string, string> = { ...options.env?.set, HOME: home, TMPDIR: tmp };
    const env = { ...options.env, set };
    const logCap = options.logCapBytes ?? this.settings.logCapBytes;
    const searchPath = set.PATH ?? process.env.PATH ?? "";
    // A rustup proxy (cargo, rustc) finds its toolchains through RUSTUP_HOME, which the private HOME would move (rustup.ts).
    const rustup = set.RUSTUP_HOME === undefined ? rustupHomeForStep(argv, options.cwd, searchPath, this.host.rustupHome) : undefined;
    if (rustup !== undefined) set.RUSTUP_HOME = rustup;
    let cgroup: string | undefined;
    let net: NetStep | undefined;
    let quiet: QuietHold | undefined;
    let idleWatch: IdleWatch | undefined;
    try {
      if (!this.settings.enabled) {
        const result = await exec(argv, { ...options, env, logCapBytes: logCap });
        return { ...result, argv: [...argv], sandboxed: false, network: true, net: "host" };
      }
      const policy = this.netPolicyOf(step.network);
      // A program that is nowhere on the step's PATH cannot start inside either; exec says so
      // in its own words (spawnError, a line in the log) without anything being launched.
      if (!onPath(argv[0] ?? "", searchPath)) {
        const result = await exec(argv, { ...options, env, logCapBytes: logCap });
        return { ...result, sandboxed: true, network: step.network, net: policy };
      }
      // The program the command names, found where the step's PATH finds it on the host, is shown read-only, or refused up front.
      const viewHost = this.viewHost([...step.writable, ...(step.readable ?? [])]);
      const shown = stepView(argv, options.cwd, searchPath, set.VIRTUAL_ENV, viewHost);
      if ("refused" in shown) return notLaunched(argv, options.logPath, shown.refused, policy);
      const rustupRefused = rustup === undefined || viewHost.visible(rustup) ? undefined : refusalOf(rustup, viewHost);
      if (rustupRefused !== undefined)
        return notLaunched(
          argv,
          options.logPath,
          `rustup's toolchains (${rustup}) cannot be shown to the step: the folder ${rustupRefused}; set RUSTUP_HOME to a folder of toolchains alone, or add it to HARNESS_SANDBOX_READ`,
          policy,
        );
      // What the last step left to do (ending its spare, making the next) waits until this agent idles or ends.
      if (step.purpose === "agent") quiet = holdQuiet(AGENT_QUIET_MAX_MS);
      const tools = this.host.netTools;
      if (policy === "own" || policy === "egress") {
        // The probe refuses stories on such a host; a step that still comes here does not get the host's network instead.
        if ("missing" in tools)
          return notLaunched(argv, options.logPath, `no network namespace can be made for this step: ${tools.missing.join(", ")} missing`, policy);
        // Beside an agent, the next spare waits until the agent idles. Work off the critical path
        // (a niced scope: the baseline) makes its own namespace and leaves the spares to the steps
        // a story waits for: a baseline's provisioning that took the spare warmed for the first
        // seat made that seat wait for the next one (bench/agents, Claude Code's implementer).
        const offCriticalPath = (currentStepScope()?.niceness ?? 0) > 0;
        const spares = offCriticalPath ? undefined : this.spareSpace(step.purpose === "agent");
        net = await prepareNetStep(this.settings.net, tools, scratch, options.logPath, this.host.resolve, spares);
        Object.assign(set, net.env);
      }
      const seen = { ...step, readable: [...(step.readable ?? []), ...shown.readable, ...(rustup !== undefined ? [rustup] : [])] };
      const view = { ...this.view(options.cwd, home, tmp, seen), ...(net ? { resolvConf: net.resolvConf } : {}) };
      cgroup = this.host.pidsCgroups ? createPidsCgroup(this.settings.maxProcesses) : undefined;
      const boxed = [this.host.bwrap, ...bwrapArgs(view)];
      const inside = cgroup
        ? [...boxed, ...argv]
        : [...boxed, this.host.prlimit, `--nproc=${this.settings.maxProcesses}`, `--data=${this.settings.memoryBytes}`, "--core=0", "--", ...argv];
      const wrapped = net ? net.launch(inside) : inside;
      const launched = cgroup ? enterCgroupArgv(cgroup, wrapped, { dataBytes: this.settings.memoryBytes }) : wrapped;
      // An agent is watched until it idles (waits on its model): then what was put off may run beside it.
      const idleNet = net;
      const onSpawn =
        step.purpose === "agent"
          ? (pid: number): void => {
              options.onSpawn?.(pid);
              idleWatch = watchIdle(
                pid,
                () => {
                  quiet?.idle();
                  idleNet?.idle();
                },
                AGENT_IDLE,
              );
            }
          : options.onSpawn;
      const result = await exec(launched, { ...options, env, logCapBytes: logCap, ...(onSpawn ? { onSpawn } : {}) });
      idleWatch?.cancel();
      quiet?.end();
      if (sandboxFailedToStart(result)) for (const listener of this.startFailureListeners) listener();
      const refused = net ? await net.finish() : [];
      net = undefined;
      const tail = refused.length > 0 ? `${result.tail}${result.tail === "" || result.tail.endsWith("\n") ? "" : "\n"}${refused.join("\n")}\n` : result.tail;
      return { ...result, tail, argv: [...argv], sandboxed: true, network: step.network, net: policy };
    } finally {
      idleWatch?.cancel();
      quiet?.end();
      await net?.finish();
      for (const restore of restores) restore();
      removeLater(scratch);
      if (cgroup) removeWhenEmpty(cgroup);
    }
  }

  /**
   * Runs a user-written command string: `/bin/sh -c`, or `/bin/sh -lc` where a login shell is
   * pinned (the provisioning override), whose profile is then the step's private one.
   */
  shell(command: string, options: ExecOptions, step: SandboxStep, shell: { login?: boolean } = {}): Promise<SandboxedResult> {
    return this.run(["/bin/sh", shell.login ? "-lc" : "-c", command], options, step);
  }

  /**
   * Whether every step sees `path` without being shown it: it lies in the system folders or
   * the operator's `HARNESS_SANDBOX_READ` / `HARNESS_SANDBOX_WRITE`, and under no mask. Always
   * true with the sandbox off. `path` should be a real path (symlinks resolved).
   */
  sees(path: string): boolean {
    if (!this.settings.enabled) return true;
    const roots = [
      ...this.host.system.filter((entry) => entry.kind === "ro-bind").map((entry) => entry.path),
      ...this.settings.readPaths,
      ...this.settings.writePaths,
    ];
    // As bubblewrap mounts them (bwrap-args.ts): a folder before anything inside it, so the deepest
    // mount holding the path decides; an operator's folder inside a masked one (a CLI installed
    // under the App's own folder) is shown, a mask inside a shown folder hides.
    const deepest = (paths: readonly string[]): number => Math.max(-1, ...paths.filter((root) => isInside(path, root)).map((root) => root.split("/").length));
    const shown = deepest(roots);
    return shown >= 0 && shown >= deepest(this.host.masked.map((mask) => mask.path));
  }

  /**
   * Whether a step could run `program` (an absolute path found on the host): the sandbox sees it,
   * or shows its installation to the step that names it (program-view.ts). For preflight.
   */
  canRun(program: string, searchPath: string = process.env.PATH ?? ""): boolean {
    if (this.sees(program)) return true;
    return !("refused" in programView(program, searchPath, this.viewHost([])));
  }

  private viewHost(stepRoots: readonly string[]): ProgramViewHost {
    return {
      visible: (path: string) => this.sees(path) || stepRoots.some((root) => isInside(path, root)),
      home: this.host.home,
      tmp: this.host.scratchRoot,
      masked: this.host.masked.map((mask) => mask.path),
    };
  }

  private view(cwd: string, home: string, tmp: string, step: SandboxStep): SandboxView {
    const writable = [...step.writable, ...this.settings.writePaths];
    const readable = [...(step.readable ?? []), ...this.settings.readPaths, ...step.writable.flatMap((dir) => gitReadPaths(dir))];
    const visibleRoots = [...this.host.system.filter((entry) => entry.kind === "ro-bind").map((entry) => entry.path), ...writable, ...readable];
    // A mask is only needed (and only possible) where something visible holds it.
    const masked = this.host.masked.filter((mask) => existsSync(mask.path) && visibleRoots.some((root) => isInside(mask.path, root)));
    return { cwd, home, tmp, writable, readable, masked, network: step.network, system: this.host.system };
  }
}

/**
 * Whether bubblewrap itself failed: not spawned at all, or exit 1 with its own `bwrap: ` line
 * (it prints one when it cannot make a namespace or a mount). A suite printing such a line only
 * costs one probe more.
 */
function sandboxFailedToStart(result: ExecResult): boolean {
  if (result.spawnError !== undefined) return true;
  return result.exitCode === 1 && /^bwrap: /m.test(result.tail);
}

/** The result of a step that could not be launched, with the reason in its log and tail. */
function notLaunched(argv: readonly string[], logPath: string | undefined, reason: string, net: NetPolicy): SandboxedResult {
  const line = `harness: ${reason}\n`;
  if (logPath !== undefined) {
    try {
      mkdirSync(dirname(logPath), { recursive: true });
      appendFileSync(logPath, line);
    } catch {
      // The reason is in the tail.
    }
  }
  return {
    argv: [...argv],
    exitCode: null,
    signal: null,
    timedOut: false,
    durationMs: 0,
    tail: line,
    spawnError: reason,
    sandboxed: true,
    network: true,
    net,
    ...(logPath !== undefined ? { logPath } : {}),
  };
}

/** The absolute path of `name` on `path`, when it is there as an executable file. */
function findProgram(name: string, path: string): string | undefined {
  return findProgramIn(name, path.split(":"));
}

/** Whether a program named like argv[0] can be found: a path as it is, a bare name on `path`. */
function onPath(program: string, path: string): boolean {
  return program.includes("/") || findProgram(program, path) !== undefined;
}

/**
 * The kernel empties a step's cgroup a moment after its last process died: it is removed in
 * the background (for up to a second), so the step's result does not wait for it. One still
 * there when the App stops goes at the next start ({@link removeStaleSandboxState}).
 */
function removeWhenEmpty(cgroup: string, tries = 50): void {
  if (removePidsCgroup(cgroup) || tries <= 0) return;
  setTimeout(() => removeWhenEmpty(cgroup, tries - 1), 20).unref();
}

/** Scratch folders of ended steps still being removed. */
const removals = new Set<Promise<void>>();

/**
 * A step's scratch folder is removed after its result is returned (deleting even two empty
 * folders costs milliseconds on a journaled disk); nothing of the step runs any more. One
 * still there when the App dies goes at the next start ({@link removeStaleScratch}).
 */
function removeLater(dir: string): void {
  const removal: Promise<void> = rm(dir, { recursive: true, force: true, maxRetries: 2 })
    .catch(() => {
      makeWritable(dir);
      return rm(dir, { recursive: true, force: true, maxRetries: 2 });
    })
    .catch(() => undefined)
    .finally(() => removals.delete(removal));
  removals.add(removal);
}

/** Resolves once every ended step's scratch folder is gone (for a clean stop, and tests). */
export async function scratchRemoved(): Promise<void> {
  while (removals.size > 0) await Promise.all([...removals]);
}

/** Removes a scratch folder, even one whose step left folders without write permission. */
export function removeTree(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
  } catch {
    makeWritable(dir);
    rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
  }
}

function makeWritable(dir: string): void {
  let stat;
  try {
    stat = lstatSync(dir);
  } catch {
    return;
  }
  if (!stat.isDirectory()) return;
  chmodSync(dir, (stat.mode & 0o777) | 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) makeWritable(join(dir, entry.name));
}

/**
 * Removes scratch folders of steps whose App process is gone (a kill -9 leaves them behind);
 * folders of live processes (another worker on the same machine) stay. Returns how many went.
 */
export function removeStaleScratch(root: string = tmpdir()): number {
  return removeOrphans(root, SCRATCH_PREFIX, (path) => {
    removeTree(path);
    return true;
  });
}

/**
 * What a killed App left of its steps: scratch folders and empty cgroups. Its processes are
 * already gone: bubblewrap dies with its parent, and every process of a step with bubblewrap.
 */
export function removeStaleSandboxState(root: string = tmpdir()): { scratch: number; cgroups: number } {
  return { scratch: removeStaleScratch(root), cgroups: removeStalePidsCgroups() };
}

/** The sandbox the operator configured through the App's environment. */
export function sandboxFromEnv(env: NodeJS.ProcessEnv = process.env): Sandbox {
  return new Sandbox(sandboxSettingsFromEnv(env), { masked: defaultMasks(env) });
}
