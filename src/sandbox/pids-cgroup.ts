/**
 * A pids cgroup per step, where the host lets the App make one. RLIMIT_NPROC (set inside the
 * sandbox) holds a fork bomb when the App runs as an ordinary user, but the kernel does not
 * apply it to processes of root's uid, and the sandbox user is root's uid outside when the
 * App runs as root. A cgroup's `pids.max` counts every process of the step whoever owns it.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { removeOrphans } from "./orphans.js";

const PREFIX = "harness-sandbox-";

/** The pids-controller folder this process's cgroup is in, v1 or v2, when it has one. */
function ownPidsCgroup(): string | undefined {
  let lines: string[];
  try {
    lines = readFileSync("/proc/self/cgroup", "utf8").split("\n");
  } catch {
    return undefined;
  }
  for (const line of lines) {
    const [, controllers = "", path = ""] = line.split(":");
    if (controllers.split(",").includes("pids")) return join("/sys/fs/cgroup/pids", path);
  }
  const unified = lines.find((line) => line.startsWith("0::"));
  if (unified === undefined) return undefined;
  const dir = join("/sys/fs/cgroup", unified.slice(3));
  try {
    return readFileSync(join(dir, "cgroup.subtree_control"), "utf8").split(/\s+/).includes("pids") ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes a cgroup allowing `max` processes for one step; undefined where the host does not let
 * the App (no pids controller, a read-only cgroup file system). The caller puts the step's
 * first process in it ({@link enterCgroupArgv}) and removes it afterwards.
 */
export function createPidsCgroup(max: number): string | undefined {
  const parent = ownPidsCgroup();
  if (parent === undefined) return undefined;
  const dir = join(parent, `${PREFIX}${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    mkdirSync(dir);
  } catch {
    return undefined;
  }
  try {
    writeFileSync(join(dir, "pids.max"), String(max));
    return dir;
  } catch {
    removePidsCgroup(dir);
    return undefined;
  }
}

/** Limits the entry shell sets before it becomes the step (inherited by every process of it). */
export interface EntryLimits {
  dataBytes: number;
}

/**
 * The command that enters cgroup `dir`, sets `limits` and then becomes `argv`: a shell moves
 * itself into the cgroup and execs, so no process of the step starts outside it. On cgroup v1
 * it writes `tasks`, not `cgroup.procs`: moving one thread skips the kernel's lock over every
 * thread group (an RCU grace period, milliseconds per launch), and the shell has one thread.
 * The same shell sets the data limit and forbids core files, so the step needs no prlimit
 * (its process limit is the cgroup: the kernel exempts root's uid from RLIMIT_NPROC).
 */
export function enterCgroupArgv(dir: string, argv: readonly string[], limits: EntryLimits): string[] {
  const file = existsSync(join(dir, "tasks")) ? "tasks" : "cgroup.procs";
  const kib = Math.max(1, Math.floor(limits.dataBytes / 1024));
  return ["/bin/sh", "-c", `echo $$ > "$0/${file}" && ulimit -d ${kib} && ulimit -c 0 && exec "$@"`, dir, ...argv];
}

/** Removes a step's cgroup (empty once the step's processes are gone); false when it cannot. */
export function removePidsCgroup(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

/** Removes the empty cgroups of App processes that are gone (a kill -9 leaves them). */
export function removeStalePidsCgroups(): number {
  const parent = ownPidsCgroup();
  return parent === undefined ? 0 : removeOrphans(parent, PREFIX, removePidsCgroup);
}
