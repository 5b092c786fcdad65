/**
 * A linked `node_modules` must hold what the committed lockfile says, or the clean clone
 * trusts an install CI will never make: a package added with `npm i --no-save` (or left from
 * another branch) is in the folder but in no lockfile, so the suite passes here and fails
 * after CI's `npm ci`. npm records what it installed in `node_modules/.package-lock.json`; it is
 * compared, package by package, with the committed `package-lock.json` (or
 * `npm-shrinkwrap.json`) of the clone. Optional packages the lockfile lists for other
 * platforms may be absent. Without npm's record (yarn, pnpm, an old npm) nothing can be
 * compared, and the result's warnings say so.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { readBoundedText, UnsafeFileError } from "../../files/index.js";

/** Lockfiles whose presence says an install can be reproduced (only npm's can be compared so far). */
const LOCKFILES = ["npm-shrinkwrap.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml"];

/** Lockfiles of large monorepos run to tens of MiB; beyond this one is not read. */
const LOCK_MAX_BYTES = 64 * 1024 * 1024;

interface LockPackage {
  version?: string;
  optional?: boolean;
  link?: boolean;
}

/** How a linked `node_modules` compares with the committed lockfile. */
export type InstallComparison =
  | { state: "matches" }
  | { state: "no-lockfile" }
  | { state: "not-compared"; why: string }
  | { state: "differs"; extraneous: string[]; missing: string[]; otherVersion: string[] };

/** The `node_modules/…` entries of a lockfile's `packages`, or undefined when it is absent or not one. */
async function lockPackages(path: string): Promise<Map<string, LockPackage> | undefined> {
  let text: string;
  try {
    text = await readBoundedText(path, { maxBytes: LOCK_MAX_BYTES });
  } catch (error) {
    if (error instanceof UnsafeFileError) return undefined;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const packages = (parsed as { packages?: unknown } | null)?.packages;
  if (typeof packages !== "object" || packages === null) return undefined;
  const entries = new Map<string, LockPackage>();
  for (const [key, value] of Object.entries(packages as Record<string, unknown>)) {
    if (!key.startsWith("node_modules/") && !key.includes("/node_modules/")) continue;
    if (typeof value === "object" && value !== null) entries.set(key, value as LockPackage);
  }
  return entries;
}

/** `node_modules/a/node_modules/@s/b` → `@s/b`. */
function packageName(key: string): string {
  return key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
}

/**
 * Compares the install in `installed` (a `node_modules` of the target) with the lockfile
 * committed beside it in the clone (`lockDir`).
 */
export async function compareInstallWithLock(installed: string, lockDir: string): Promise<InstallComparison> {
  const committed = LOCKFILES.filter((name) => existsSync(join(lockDir, name)));
  // Without a committed lockfile there is no install CI would reproduce to compare with.
  if (committed.length === 0) return { state: "no-lockfile" };
  const record = await lockPackages(join(installed, ".package-lock.json"));
  if (record === undefined)
    return {
      state: "not-compared",
      why: `${committed.join(", ")} is committed, but node_modules has no npm install record (.package-lock.json) to compare with it`,
    };
  const lock = (await lockPackages(join(lockDir, "npm-shrinkwrap.json"))) ?? (await lockPackages(join(lockDir, "package-lock.json")));
  if (lock === undefined) return { state: "not-compared", why: `${committed.join(", ")} is not an npm lockfile of version 2 or 3` };
  const extraneous: string[] = [];
  const otherVersion: string[] = [];
  for (const [key, entry] of record) {
    const locked = lock.get(key);
    if (locked === undefined) extraneous.push(`${packageName(key)}@${entry.version ?? "?"}`);
    else if (!entry.link && !locked.link && entry.version !== locked.version)
      otherVersion.push(`${packageName(key)} (installed ${entry.version ?? "?"}, locked ${locked.version ?? "?"})`);
  }
  const missing = [...lock]
    .filter(([key, entry]) => !record.has(key) && entry.optional !== true)
    .map(([key, entry]) => `${packageName(key)}@${entry.version ?? "?"}`);
  if (extraneous.length + missing.length + otherVersion.length === 0) return { state: "matches" };
  return { state: "differs", extraneous, missing, otherVersion };
}

/** The sentence a refusal gives, naming at most a few packages of each kind. */
export function describeInstallDifference(name: string, difference: Extract<InstallComparison, { state: "differs" }>): string {
  const few = (list: string[]): string => `${list.slice(0, 5).join(", ")}${list.length > 5 ? ` and ${list.length - 5} more` : ""}`;
  const parts = [
    ...(difference.extraneous.length > 0 ? [`installed but not in the committed lockfile: ${few(difference.extraneous)}`] : []),
    ...(difference.missing.length > 0 ? [`in the committed lockfile but not installed: ${few(difference.missing)}`] : []),
    ...(difference.otherVersion.length > 0 ? [`installed at another version: ${few(difference.otherVersion)}`] : []),
  ];
  return `${name} does not match the committed lockfile, so a suite run with it would not be the one CI runs after npm ci (${parts.join("; ")}); run npm ci, or provision the clean clone afresh instead: clean_clone.provision: true in .github/harness.yml, or harness clean-clone --provision`;
}
