/**
 * The baseline kept per (base commit, lockfile hash, test command, sandbox policy) in
 * HARNESS_HOME, so the next story on the same base does not run the suite on it again. An
 * entry is read only when it is valid against its schema and its key is exactly the one asked
 * for; a corrupt, foreign or stale one is ignored and overwritten (atomic rename: a reader
 * sees the old entry or the new one). Two tasks of one process asking for the same key at
 * once share one run and one write. Only a result that says something about the base is kept:
 * a run that timed out, was stopped, or could not start is run again next time.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readBoundedFileSync, writeFileAtomicSync } from "../files/index.js";
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

/** What is kept of the run: enough for the gate's judgement (judgeRedGate) and the journal. */
export interface CachedBaseline {
  exitCode: number;
  outputTail: string;
  durationMs: number;
}

interface BaselineRecord {
  version: 1;
  key: BaselineKey;
  result: CachedBaseline;
  at: string;
}

/** One hash over the lockfiles present at `root` (name and content); absent ones count as absent. */
export function lockfileHash(root: string): string {
  const hash = createHash("sha256");
  for (const name of LOCKFILES) {
    let content: Buffer;
    try {
      // The repository's file: bounded and never blocking (a FIFO named like a lockfile must not hang the task).
      content = readBoundedFileSync(join(root, name), { maxBytes: MAX_LOCKFILE_BYTES });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      // Unreadable as a lockfile: its name with a marker no content hashes to, so the key differs from any readable one.
      hash.update(`${name}\0unreadable\0`);
      continue;
    }
    hash.update(`${name}\0${content.length}\0`);
    hash.update(content);
  }
  return hash.digest("hex");
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
  return record.result;
}

/** Keeps `result` for `key` (schema-checked, atomic rename); a home that cannot be written costs a run next time, nothing more. */
export function writeCachedBaseline(harnessHome: string, key: BaselineKey, result: CachedBaseline): void {
  const file = baselineCachePath(harnessHome, key);
  const record: BaselineRecord = { version: 1, key, result, at: new Date().toISOString() };
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
