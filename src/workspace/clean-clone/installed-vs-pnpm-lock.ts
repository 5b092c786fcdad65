/**
 * pnpm's side of installed-vs-lock.ts. pnpm puts each package the root project depends on at
 * the top of `node_modules` as a symlink into its virtual store
 * (`node_modules/dep -> .pnpm/dep@1.0.0/node_modules/dep`; real folders with
 * `nodeLinker: hoisted`), records the install in `node_modules/.modules.yaml`, and keeps a copy
 * of the lockfile it installed from, the whole graph, in `node_modules/.pnpm/lock.yaml`. The top
 * is compared with the committed `pnpm-lock.yaml`'s root importer (a package it does not list,
 * one it lists but absent, one at another version), then, when the top matches, the graph
 * pnpm installed with the committed one, package by package.
 */
import { basename } from "node:path";
import { installedVersion, isMapping, readMapping, topLevelPackages, verdict, type InstallComparison, type TopLevelEntry } from "./install-record.js";
import { readPnpmLock, resolvedPath, splitPath, storeFolderHolds, storeFolderName, withoutPeers, type PnpmLock } from "./pnpm-lockfile.js";

/** What a frozen pnpm install does: exactly the lockfile, or an error. */
const REINSTALL = "pnpm install --frozen-lockfile";

/** The names `.modules.yaml` says pnpm hoisted to the top on purpose (`public-hoist-pattern`, `shamefully-hoist`). */
function publiclyHoisted(modules: Record<string, unknown>): Set<string> {
  const names = new Set<string>();
  const hoisted = modules.hoistedDependencies;
  if (!isMapping(hoisted)) return names;
  for (const aliases of Object.values(hoisted)) {
    if (!isMapping(aliases)) continue;
    for (const [alias, visibility] of Object.entries(aliases)) if (visibility === "public") names.add(alias);
  }
  return names;
}

/** What a top-level entry holds: its version, in words, and whether it is the package of a dependency path. */
interface Installed {
  version: string;
  holds(path: string): boolean;
}

async function installedAs(installed: string, name: string, entry: TopLevelEntry): Promise<Installed> {
  if (entry.kind === "folder") {
    const version = (await installedVersion(installed, name)) ?? "?";
    return { version, holds: (path) => splitPath(path).version === version };
  }
  const at = entry.target.lastIndexOf("/node_modules/");
  // A symlink that is not into a store folder (a workspace package, a `pnpm link`) holds no store version.
  if (at === -1) return { version: "a link outside the store", holds: () => false };
  const folder = basename(entry.target.slice(0, at));
  const prefix = `${storeFolderName(name)}@`;
  return { version: folder.startsWith(prefix) ? withoutPeers(folder.slice(prefix.length)) : folder, holds: (path) => storeFolderHolds(folder, path) };
}

/** The differences between what pnpm installed (`current`, its `.pnpm/lock.yaml`) and the committed graph. */
function graphDifferences(current: PnpmLock, committed: PnpmLock): { extraneous: string[]; missing: string[]; otherVersion: string[] } {
  const extra = [...current.packages.keys()].filter((path) => !committed.packages.has(path));
  const absent = [...committed.packages].filter(([path, optional]) => !optional && !current.packages.has(path)).map(([path]) => path);
  const absentByName = new Map<string, string[]>();
  for (const path of absent) {
    const { name, version } = splitPath(path);
    absentByName.set(name, [...(absentByName.get(name) ?? []), version]);
  }
  const paired = new Set<string>();
  const extraneous: string[] = [];
  const otherVersion: string[] = [];
  for (const path of extra) {
    const { name, version } = splitPath(path);
    const locked = absentByName.get(name);
    if (locked === undefined) extraneous.push(path);
    else {
      otherVersion.push(`${name} (installed ${version}, locked ${locked.join(", ")})`);
      paired.add(name);
    }
  }
  const missing = absent.filter((path) => !paired.has(splitPath(path).name));
  return { extraneous, missing, otherVersion: [...new Set(otherVersion)] };
}

/**
 * Compares the pnpm install in `installed` with the `pnpm-lock.yaml` committed in `lockDir`.
 * Call it when `installed` holds pnpm's record (`.modules.yaml`).
 */
export async function compareWithPnpmLock(installed: string, lockDir: string): Promise<InstallComparison> {
  const document = await readMapping(lockDir, "pnpm-lock.yaml");
  if ("why" in document) return { state: "not-compared", why: document.why };
  const committed = readPnpmLock(document.value, "pnpm-lock.yaml");
  if ("why" in committed) return { state: "not-compared", why: committed.why };
  const modules = await readMapping(installed, ".modules.yaml");
  if ("why" in modules) return { state: "not-compared", why: `node_modules/${modules.why}` };
  const entries = await topLevelPackages(installed);
  if ("why" in entries) return { state: "not-compared", why: entries.why };

  const extraneous: string[] = [];
  const missing: string[] = [];
  const otherVersion: string[] = [];
  for (const [name, { wanted, optional }] of committed.direct) {
    const path = resolvedPath(name, wanted, committed.major);
    const entry = entries.get(name);
    if (entry === undefined) {
      if (!optional) missing.push(path ?? `${name} (${wanted})`);
      continue;
    }
    // A `link:` is a folder of the repository, not a version of the store.
    if (path === undefined) continue;
    const found = await installedAs(installed, name, entry);
    if (!found.holds(path)) otherVersion.push(`${name} (installed ${found.version}, locked ${splitPath(path).version})`);
  }
  const hoisted = publiclyHoisted(modules.value);
  for (const [name, entry] of entries) {
    if (committed.direct.has(name) || hoisted.has(name)) continue;
    extraneous.push(`${name}@${(await installedAs(installed, name, entry)).version}`);
  }
  if (extraneous.length + missing.length + otherVersion.length > 0) return verdict(extraneous, missing, otherVersion, REINSTALL);

  // The top matches; the graph below it is in pnpm's copy of the lockfile it installed from.
  const record = await readMapping(installed, ".pnpm/lock.yaml");
  if ("why" in record) {
    // pnpm before 6 kept no copy; an absent one leaves the top's comparison standing.
    if (record.why.endsWith("does not exist")) return { state: "matches" };
    return { state: "not-compared", why: `node_modules/${record.why}` };
  }
  const current = readPnpmLock(record.value, "node_modules/.pnpm/lock.yaml");
  if ("why" in current) return { state: "not-compared", why: current.why };
  // pnpm rewrites an older format when it installs; keys of two formats do not compare.
  if (current.major !== committed.major) return { state: "matches" };
  const graph = graphDifferences(current, committed);
  return verdict(graph.extraneous, graph.missing, graph.otherVersion, REINSTALL);
}
