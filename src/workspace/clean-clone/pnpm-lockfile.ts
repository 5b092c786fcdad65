/**
 * The parts of a pnpm lockfile the install comparison needs, across the three formats pnpm has
 * written: 5.x (pnpm 6-7: `dependencies: { name: version }`, packages keyed `/name/version`),
 * 6.x (pnpm 8: `dependencies: { name: { specifier, version } }`, packages keyed
 * `/name@version`) and 9.x (pnpm 9-10: only `importers`, packages keyed `name@version` with the
 * installed graph, peers included, under `snapshots`). A workspace lockfile of any format keys
 * its projects under `importers`, the root one as `.`. Dependency paths are brought to one
 * spelling, `name@version(peers)`, so two lockfiles can be compared key by key.
 */
import { directDependencies, isMapping, nameOf, type Direct } from "./install-record.js";

/** A pnpm lockfile, read. */
export interface PnpmLock {
  /** The format's major version: 5, 6 or 9. */
  major: number;
  /** What the root project depends on, with the lockfile's version (or `link:…`, or a dependency path for an alias). */
  direct: Direct;
  /** Every package of the installed graph, by dependency path, and whether it is optional. */
  packages: Map<string, boolean>;
}

/** The formats this comparison reads (5.x, 6.x, and 9.x; pnpm never wrote a 7 or 8). */
const KNOWN_MAJORS = new Set([5, 6, 9]);

/** `/name/1.0.0` (5.x), `/name@1.0.0` (6.x) or `name@1.0.0` (9.x) → `name@1.0.0`. */
export function dependencyPath(key: string, major: number): string {
  const bare = key.startsWith("/") ? key.slice(1) : key;
  if (major !== 5) return bare;
  const segments = bare.split("/");
  const nameLength = bare.startsWith("@") ? 2 : 1;
  if (segments.length <= nameLength) return bare;
  return `${segments.slice(0, nameLength).join("/")}@${segments.slice(nameLength).join("/")}`;
}

/** A lockfile's `lockfileVersion` (`5.4`, `'6.0'`, `'9.0'`, `'5.4-inlineSpecifiers'`) as its major number. */
function majorOf(version: unknown): number | undefined {
  if (typeof version !== "number" && typeof version !== "string") return undefined;
  const major = Number.parseInt(String(version), 10);
  return Number.isFinite(major) ? major : undefined;
}

/**
 * Reads a parsed pnpm lockfile (`file` names it in the why), or says why it cannot be compared:
 * a version of a format this comparison does not know is not guessed at.
 */
export function readPnpmLock(document: Record<string, unknown>, file: string): PnpmLock | { why: string } {
  const major = majorOf(document.lockfileVersion);
  if (major === undefined || !KNOWN_MAJORS.has(major))
    return { why: `${file} has lockfileVersion ${JSON.stringify(document.lockfileVersion) ?? "(none)"}, a format this check does not read (5.x, 6.x or 9.x)` };
  const importers = document.importers;
  let root: unknown = document;
  if (importers !== undefined) {
    if (!isMapping(importers)) return { why: `${file} has an importers field that is not a mapping` };
    root = importers["."] ?? {};
  } else if (major === 9) return { why: `${file} (lockfileVersion 9) has no importers` };
  if (!isMapping(root)) return { why: `${file} has a root importer that is not a mapping` };
  // 9.x keeps the installed graph (with peers) under snapshots, and only metadata under packages.
  const graph = major === 9 ? (document.snapshots ?? document.packages ?? {}) : (document.packages ?? {});
  if (!isMapping(graph)) return { why: `${file} has a packages field that is not a mapping` };
  const packages = new Map<string, boolean>();
  for (const [key, value] of Object.entries(graph)) packages.set(dependencyPath(key, major), isMapping(value) && value.optional === true);
  return { major, direct: directDependencies(root), packages };
}

/** The name and version of a dependency path (`@s/b@1.0.0(peer@2.0.0)` → `@s/b`, `1.0.0(peer@2.0.0)`). */
export function splitPath(path: string): { name: string; version: string } {
  const name = nameOf(path);
  return { name, version: path.slice(name.length + 1) };
}

/** A version without its peers suffix: `1.0.0(peer@2.0.0)` (6.x, 9.x) or `1.0.0_peer@2.0.0` (5.x) → `1.0.0`. */
export function withoutPeers(version: string): string {
  const cut = version.search(/[(_]/);
  return cut === -1 ? version : version.slice(0, cut);
}

/** An alias's target in a 9.x importer (`other@1.0.0`): a name, then `@`, not a protocol (`file:`, `link:`). */
const ALIAS = /^(@[^/@:]+\/)?[^/@:]+@/;

/**
 * The dependency path (without peers) that the root's `name` at lockfile `version` resolves to:
 * `name@version` for a plain version, the target for an alias (`/other@1.0.0`, `/other/1.0.0`,
 * `other@1.0.0`). Undefined for a `link:` (a workspace or local folder, not in the store).
 */
export function resolvedPath(name: string, version: string, major: number): string | undefined {
  if (version.startsWith("link:")) return undefined;
  if (version.startsWith("/")) return withoutPeersOfPath(dependencyPath(version, major));
  if (major === 9 && ALIAS.test(version)) return withoutPeersOfPath(version);
  return `${name}@${withoutPeers(version)}`;
}

function withoutPeersOfPath(path: string): string {
  const { name, version } = splitPath(path);
  return `${name}@${withoutPeers(version)}`;
}

/** pnpm's folder name in its virtual store for a dependency path: characters a file name cannot hold become `+`. */
export function storeFolderName(path: string): string {
  return path.replace(/[\\/:*?"<>|#]/g, "+");
}

/**
 * Whether store folder `folder` (`.pnpm/<folder>/node_modules/<name>`) holds dependency path
 * `path` (without peers): the folder is the path, maybe with a peers suffix after `_`, or, for a
 * name too long for the file system, pnpm's truncation of it (its head, `_`, a 26-letter hash).
 */
export function storeFolderHolds(folder: string, path: string): boolean {
  const expected = storeFolderName(path);
  if (folder === expected || folder.startsWith(`${expected}_`)) return true;
  const head = folder.length > 100 ? folder.slice(0, -27) : undefined;
  return head !== undefined && (expected.startsWith(head) || head.startsWith(`${expected}_`));
}
