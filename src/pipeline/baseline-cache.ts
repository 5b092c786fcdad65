/**
 * The baseline kept per (base commit, lockfile hash, test command, sandbox policy) in
 * HARNESS_HOME, so the next story on the same base does not run the suite on it again. An
 * entry is read only when it is valid against its schema and its key is exactly the one asked
 * for; a corrupt, foreign or stale one is ignored and overwritten (atomic rename: a reader
 * sees the old entry or the new one). An entry read is touched, so housekeeping removes only
 * the entries no story used for the retention period ({@link pruneCachedBaselines}). Two tasks of one process asking for the same key at
 * once share one run and one write. Only a result that says something about the base is kept:
 * a run that timed out, was stopped, or could not start is run again next time.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { readBoundedFileSync, UnsafeFileError, writeFileAtomicSync } from "../files/index.js";
import { gitBytes, splitNul } from "../workspace/index.js";
import type { RunCounts } from "../integrity/index.js";
import { schemas } from "../schema/index.js";

/** The files whose content decides what provisioning installs, read at the worktree's root. */
const LOCKFILES = [
  "package-lock.json",
  "npm-shrinkwrap.json",
  "pnpm-lock.yaml",
  "yarn.lock",
  "bun.lockb",
  "Cargo.lock",
  "poetry.lock",
  "uv.lock",
  "go.sum",
  "Gemfile.lock",
];
const MAX_LOCKFILE_BYTES = 64 * 1024 * 1024;

/** What a cached baseline is about. */
export interface BaselineKey {
  commit: string;
  lockfileHash: string;
  command: string;
  policy: { sandboxed: boolean; network: boolean; net: "none" | "own" | "egress" | "host" };
}

/** What is kept of the run: enough for the gate's judgement (judgeRedGate), the integrity gate's count and the journal. */
export interface CachedBaseline {
  exitCode: number;
  outputTail: string;
  durationMs: number;
  /**
   * The tests each runner reported, read from the whole log when the suite ran: the tail keeps
   * its last lines only, and `go test -v` reports one line per test.
   */
  counts: RunCounts;
}

/** Version 2 added `counts`: a version-1 entry, whose tail may under-count, is run again and rewritten. */
const RECORD_VERSION = 2;

interface BaselineRecord {
  version: typeof RECORD_VERSION;
  key: BaselineKey;
  result: CachedBaseline;
  at: string;
}

/** A lockfile as the hash takes it: its bytes, absent, or there but unreadable as a lockfile. */
type LockfileSide = Buffer | "absent" | "unreadable";

/** The one hash over every lockfile's side, given in {@link LOCKFILES} order; absent ones count as absent. */
function hashLockfiles(sides: readonly LockfileSide[]): string {
  const hash = createHash("sha256");
  LOCKFILES.forEach((name, index) => {
    const content = sides[index] ?? "absent";
    if (content === "absent") return;
    // Unreadable as a lockfile: its name with a marker no content hashes to, so the key differs from any readable one.
    if (content === "unreadable") hash.update(`${name}\0unreadable\0`);
    else {
      hash.update(`${name}\0${content.length}\0`);
      hash.update(content);
    }
  });
  return hash.digest("hex");
}

/** One hash over the lockfiles present at `root` (name and content); absent ones count as absent. */
export function lockfileHash(root: string): string {
  return hashLockfiles(
    LOCKFILES.map((name): LockfileSide => {
      try {
        // The repository's file: bounded and never blocking (a FIFO named like a lockfile must not hang the task).
        return readBoundedFileSync(join(root, name), { maxBytes: MAX_LOCKFILE_BYTES });
      } catch (error) {
        // The bounded reader says "missing" for a file that is not there (its error carries no errno code).
        return error instanceof UnsafeFileError && error.reason === "missing" ? "absent" : "unreadable";
      }
    }),
  );
}

/**
 * The {@link lockfileHash} a worktree checked out at `commit` would have, read from git's
 * objects in `repo`: the key of a baseline run on a commit no worktree of this task holds (the
 * base a re-admitted story is judged against). A symlink, a folder or a file over the cap is
 * unreadable, as on disk.
 */
export async function lockfileHashAt(repo: string, commit: string): Promise<string> {
  const listing = await gitBytes(["ls-tree", "-z", "-l", "--full-tree", commit, "--", ...LOCKFILES], { cwd: repo, readOnly: true });
  const entries = new Map<string, { mode: string; id: string; size: number }>();
  for (const line of splitNul(listing)) {
    const tab = line.indexOf("\t");
    const [mode = "", , id = "", size = ""] = line.slice(0, tab).split(/ +/);
    entries.set(line.slice(tab + 1), { mode, id, size: Number(size) });
  }
  const sides = await Promise.all(
    LOCKFILES.map(async (name): Promise<LockfileSide> => {
      const entry = entries.get(name);
      if (!entry) return "absent";
      if ((entry.mode !== "100644" && entry.mode !== "100755") || !(entry.size <= MAX_LOCKFILE_BYTES)) return "unreadable";
      return gitBytes(["cat-file", "blob", entry.id], { cwd: repo, readOnly: true, captureBytes: MAX_LOCKFILE_BYTES + 1 });
    }),
  );
  return hashLockfiles(sides);
}

/** The entry's file: a hash of the whole key, so no part of a command reaches a file name. */
export function baselineCachePath(harnessHome: string, key: BaselineKey): string {
  const name = createHash("sha256").update(JSON.stringify(key)).digest("hex").slice(0, 40);
  return join(harnessHome, "baselines", `${name}.json`);
}

/** The kept result for `key`, or undefined when there is none, or it is corrupt, foreign or about another key. */
export function readCachedBaseline(harnessHome: string, key: BaselineKey): CachedBaseline | undefined {
  let text: string;
  try {
    text = readFileSync(baselineCachePath(harnessHome, key), "utf8");
  } catch {
    return undefined;
  }
  const record = schemas().parseValid<BaselineRecord>("baseline-cache", text);
  if (record === undefined || JSON.stringify(record.key) !== JSON.stringify(key)) return undefined;
  try {
    // Used now: its age is counted from its last use, not from the run that wrote it.
    const now = new Date();
    utimesSync(baselineCachePath(harnessHome, key), now, now);
  } catch {
    // A home that cannot be written keeps the entry's age; housekeeping may remove it sooner.
  }
  return record.result;
}

/**
 * Removes kept baselines no story read or wrote in the last `days` (the run folders' retention):
 * every base commit a story starts from leaves one, and a base the repository moved past is
 * never asked for again. Returns the removed files; one removed while a story reads it is a
 * cache miss, nothing more.
 */
export function pruneCachedBaselines(harnessHome: string, days: number, now: Date = new Date()): string[] {
  const dir = join(harnessHome, "baselines");
  const cutoff = now.getTime() - days * 24 * 60 * 60_000;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const file = join(dir, name);
    try {
      if (statSync(file).mtimeMs >= cutoff) continue;
      rmSync(file, { recursive: true, force: true });
      removed.push(file);
    } catch {
      // Gone while we looked.
    }
  }
  return removed;
}

/** Keeps `result` for `key` (schema-checked, atomic rename); a home that cannot be written costs a run next time, nothing more. */
export function writeCachedBaseline(harnessHome: string, key: BaselineKey, result: CachedBaseline): void {
  const file = baselineCachePath(harnessHome, key);
  const record: BaselineRecord = { version: RECORD_VERSION, key, result, at: new Date().toISOString() };
  schemas().validate("baseline-cache", record, file);
  try {
    mkdirSync(join(harnessHome, "baselines"), { recursive: true });
    writeFileAtomicSync(file, `${JSON.stringify(record)}\n`, { fsync: false });
  } catch {
    // Not kept: the next story on this base runs the suite again.
  }
}

/**
 * Runs in flight per entry file: a second task on the same key while the first runs waits for
 * its result instead of running the suite beside it. Like the sandbox's pending removals, this
 * is work in progress of the process, not configuration.
 */
const inFlight = new Map<string, Promise<unknown>>();

/** Runs `work` once per `file` at a time: callers arriving while it runs get the same promise. */
export function once<T>(file: string, work: () => Promise<T>): { promise: Promise<T>; shared: boolean } {
  const running = inFlight.get(file) as Promise<T> | undefined;
  if (running) return { promise: running, shared: true };
  const promise = work().finally(() => inFlight.delete(file));
  inFlight.set(file, promise);
  return { promise, shared: false };
}
