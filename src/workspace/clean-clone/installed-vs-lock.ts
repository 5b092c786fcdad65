/**
 * A linked `node_modules` must hold what the committed lockfile says, or the clean clone
 * trusts an install CI will never make: a package added with `npm i --no-save` (or left from
 * another branch) is in the folder but in no lockfile, so the suite passes here and fails
 * after CI's `npm ci`. npm records what it installed in `node_modules/.package-lock.json`; it is
 * compared, package by package, with the committed `package-lock.json` (or
 * `npm-shrinkwrap.json`) of the clone. Optional packages the lockfile lists for other
 * platforms may be absent. pnpm's and yarn's installs are compared by their own files
 * (installed-vs-pnpm-lock.ts, installed-vs-yarn-lock.ts), chosen by the record the tool left in
 * `node_modules`. Without a record of the tool whose lockfile is committed (an old npm, an
 * install by another tool) nothing can be compared, and the result's warnings say so.
 */
import { existsSync, lstatSync } from "node:fs";
import { join } from "node:path";
import { readBoundedText, UnsafeFileError } from "../../files/index.js";
import { LOCK_MAX_BYTES, verdict, type InstallComparison } from "./install-record.js";
import { compareWithPnpmLock } from "./installed-vs-pnpm-lock.js";
import { compareWithYarnLock } from "./installed-vs-yarn-lock.js";

export type { InstallComparison } from "./install-record.js";

/** Lockfiles whose presence says an install can be reproduced. */
const LOCKFILES = ["npm-shrinkwrap.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml"];

/** Each tool: its lockfiles, the records its install leaves in node_modules, and how it is compared. */
const TOOLS = [
  { tool: "npm", lockfiles: ["npm-shrinkwrap.json", "package-lock.json"], records: [".package-lock.json"], compare: compareWithNpmLock },
  { tool: "pnpm", lockfiles: ["pnpm-lock.yaml"], records: [".modules.yaml"], compare: compareWithPnpmLock },
  { tool: "yarn", lockfiles: ["yarn.lock"], records: [".yarn-integrity", ".yarn-state.yml"], compare: compareWithYarnLock },
];

/** Whether `path` is there at all (a symlink counts: its reader refuses it, naming it). */
function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

interface LockPackage {
  version?: string;
  optional?: boolean;
  link?: boolean;
}

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
 * committed beside it in the clone (`lockDir`), by the record of the tool that installed it.
 */
export async function compareInstallWithLock(installed: string, lockDir: string): Promise<InstallComparison> {
  const committed = LOCKFILES.filter((name) => existsSync(join(lockDir, name)));
  // Without a committed lockfile there is no install CI would reproduce to compare with.
  if (committed.length === 0) return { state: "no-lockfile" };
  const recorded = TOOLS.filter((tool) => tool.records.some((record) => present(join(installed, record))));
  const comparable = recorded.find((tool) => tool.lockfiles.some((name) => committed.includes(name)));
  if (comparable !== undefined) return comparable.compare(installed, lockDir, committed);
  const installedBy = recorded.map((tool) => tool.tool).join(" and ");
  return {
    state: "not-compared",
    why:
      installedBy !== ""
        ? `node_modules was installed by ${installedBy}, but the committed lockfile is ${committed.join(", ")}`
        : `${committed.join(", ")} is committed, but node_modules has no install record to compare with it (npm's .package-lock.json, pnpm's .modules.yaml, yarn's .yarn-integrity or .yarn-state.yml)`,
  };
}

/** npm's comparison: its record, `node_modules/.package-lock.json`, entry by entry with the committed lockfile. */
async function compareWithNpmLock(installed: string, lockDir: string, committed: string[]): Promise<InstallComparison> {
  const record = await lockPackages(join(installed, ".package-lock.json"));
  if (record === undefined)
    return {
      state: "not-compared",
      why: `${committed.join(", ")} is committed, but node_modules/.package-lock.json is not an npm install record that can be read`,
    };
  const lock = (await lockPackages(join(lockDir, "npm-shrinkwrap.json"))) ?? (await lockPackages(join(lockDir, "package-lock.json")));
  const npmLocks = committed.filter((name) => name !== "yarn.lock" && name !== "pnpm-lock.yaml");
  if (lock === undefined) return { state: "not-compared", why: `${npmLocks.join(", ")} is not an npm lockfile of version 2 or 3` };
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
  return verdict(extraneous, missing, otherVersion, "npm ci");
}

/** The sentence a refusal gives, naming at most a few packages of each kind. */
export function describeInstallDifference(name: string, difference: Extract<InstallComparison, { state: "differs" }>): string {
  const few = (list: string[]): string => `${list.slice(0, 5).join(", ")}${list.length > 5 ? ` and ${list.length - 5} more` : ""}`;
  const parts = [
    ...(difference.extraneous.length > 0 ? [`installed but not in the committed lockfile: ${few(difference.extraneous)}`] : []),
    ...(difference.missing.length > 0 ? [`in the committed lockfile but not installed: ${few(difference.missing)}`] : []),
    ...(difference.otherVersion.length > 0 ? [`installed at another version: ${few(difference.otherVersion)}`] : []),
  ];
  const reinstall = difference.reinstall ?? "npm ci";
  return `${name} does not match the committed lockfile, so a suite run with it would not be the one CI runs after ${reinstall} (${parts.join("; ")}); run ${reinstall}, or provision the clean clone afresh instead: clean_clone.provision: true in .github/harness.yml, or harness clean-clone --provision`;
}
