/**
 * yarn's side of installed-vs-lock.ts. Classic yarn records an install in
 * `node_modules/.yarn-integrity` (JSON: the patterns and lockfile entries it installed, the
 * packages `yarn link`ed in); yarn berry with `nodeLinker: node-modules` in
 * `node_modules/.yarn-state.yml`. Both hoist: the top of `node_modules` holds the project's own
 * dependencies and whichever of theirs were hoisted. So each top-level package folder (its
 * package.json version) is compared with the committed `yarn.lock`: a dependency of package.json
 * at another version than the lockfile resolves its range to, one absent, and a package the
 * lockfile does not hold at all (or not at that version).
 */
import {
  directDependencies,
  installedVersions,
  isMapping,
  readInside,
  readMapping,
  topLevelPackages,
  verdict,
  type InstallComparison,
} from "./install-record.js";
import { lockedVersion, readYarnLock } from "./yarn-lockfile.js";

/** yarn's install record, by whichever yarn wrote it. */
type YarnRecord = { berry: false; linked: Set<string> } | { berry: true };

/** The record in `installed`, undefined when there is none, or why it cannot be read. */
export async function readYarnRecord(installed: string): Promise<YarnRecord | undefined | { why: string }> {
  const classic = await readMapping(installed, ".yarn-integrity", true);
  if ("value" in classic) {
    const linked = classic.value.linkedModules;
    return { berry: false, linked: new Set(Array.isArray(linked) ? linked.filter((name): name is string => typeof name === "string") : []) };
  }
  if (!classic.why.endsWith("does not exist")) return { why: `node_modules/${classic.why}` };
  const berry = await readMapping(installed, ".yarn-state.yml");
  if ("value" in berry) return isMapping(berry.value.__metadata) ? { berry: true } : { why: "node_modules/.yarn-state.yml has no __metadata" };
  return berry.why.endsWith("does not exist") ? undefined : { why: `node_modules/${berry.why}` };
}

/**
 * Compares the yarn install in `installed` with the `yarn.lock` and package.json committed in
 * `lockDir`. Call it when `installed` holds a yarn record (`.yarn-integrity` or `.yarn-state.yml`).
 */
export async function compareWithYarnLock(installed: string, lockDir: string): Promise<InstallComparison> {
  const record = await readYarnRecord(installed);
  if (record === undefined) return { state: "not-compared", why: "node_modules has no yarn install record (.yarn-integrity or .yarn-state.yml)" };
  if ("why" in record) return { state: "not-compared", why: record.why };
  const text = await readInside(lockDir, "yarn.lock");
  if ("why" in text) return { state: "not-compared", why: text.why };
  const lock = readYarnLock(text.text, "yarn.lock");
  if ("why" in lock) return { state: "not-compared", why: lock.why };
  if (lock.berry !== record.berry)
    return {
      state: "not-compared",
      why: `node_modules was installed by ${record.berry ? "yarn berry" : "classic yarn"}, but yarn.lock is ${lock.berry ? "yarn berry's" : "classic yarn's"}`,
    };
  const manifest = await readMapping(lockDir, "package.json", true);
  if ("why" in manifest) return { state: "not-compared", why: manifest.why };
  const entries = await topLevelPackages(installed);
  if ("why" in entries) return { state: "not-compared", why: entries.why };

  const direct = directDependencies(manifest.value);
  const folders = [...entries].filter(([, entry]) => entry.kind === "folder").map(([name]) => name);
  const versions = await installedVersions(installed, folders);
  const extraneous: string[] = [];
  const missing: string[] = [];
  const otherVersion: string[] = [];
  for (const [name, { wanted, optional }] of direct) {
    const locked = lockedVersion(lock, name, wanted);
    const entry = entries.get(name);
    if (entry === undefined) {
      if (!optional) missing.push(`${name}@${locked ?? wanted}`);
      continue;
    }
    // A link (`link:`, `portal:`, a workspace) is a folder of the repository, not a locked version;
    // a range the lockfile does not resolve fails CI's frozen install on its own.
    if (entry.kind === "link" || locked === undefined) continue;
    const version = versions.get(name);
    if (version !== undefined && version !== locked) otherVersion.push(`${name} (installed ${version}, locked ${locked})`);
  }
  for (const [name, entry] of entries) {
    if (direct.has(name)) continue;
    if (entry.kind === "link") {
      // Classic yarn names what `yarn link` put here; berry's lockfile holds its workspaces.
      const unlocked = record.berry ? !lock.versions.has(name) : record.linked.has(name);
      if (unlocked) extraneous.push(`${name} (a link)`);
      continue;
    }
    const version = versions.get(name);
    if (version === undefined) continue;
    const lockedVersions = lock.versions.get(name);
    if (lockedVersions === undefined) extraneous.push(`${name}@${version}`);
    else if (!lockedVersions.has(version)) otherVersion.push(`${name} (installed ${version}, locked ${[...lockedVersions].join(", ")})`);
  }
  return verdict(extraneous, missing, otherVersion, record.berry ? "yarn install --immutable" : "yarn install --frozen-lockfile");
}
