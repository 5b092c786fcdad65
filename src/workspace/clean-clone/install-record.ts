/**
 * What the three lockfile comparisons (npm's, pnpm's, yarn's) share: the result they give, and
 * careful reads of what a repository and its install hold. Both are the user's to shape and may
 * be hostile (a lockfile that is a symlink to a secret, a FIFO, gigabytes, a `package.json` of a
 * package that leads out of `node_modules`), so every read is bounded, never follows a final
 * symlink, and stays inside the folder it belongs to; a file that cannot be read or parsed makes
 * the comparison `not-compared`, naming the file, and never throws.
 */
import { lstat, readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { readBoundedText, UnsafeFileError } from "../../files/index.js";

/** How a linked `node_modules` compares with the committed lockfile. */
export type InstallComparison =
  | { state: "matches" }
  | { state: "no-lockfile" }
  | { state: "not-compared"; why: string }
  | {
      state: "differs";
      extraneous: string[];
      missing: string[];
      otherVersion: string[];
      /** The command that installs exactly the lockfile (`npm ci` when absent). */
      reinstall?: string;
    };

/** Lockfiles of large monorepos run to tens of MiB; beyond this one is not read. */
export const LOCK_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The yaml library reads about a MiB a second on a loaded machine (its lexer, not the caller, is
 * the cost): a YAML file beyond this is not compared rather than holding the check for minutes.
 */
export const YAML_MAX_BYTES = 16 * 1024 * 1024;

/** A package.json is a page; one larger than this is not read. */
const MANIFEST_MAX_BYTES = 1024 * 1024;

/** More top-level packages than any real project has: a folder beyond it is not compared. */
const MAX_TOP_LEVEL = 50_000;

/** The text of `file` in `folder` (which it must really lie in), or why it cannot be read. */
export async function readInside(folder: string, file: string, maxBytes = LOCK_MAX_BYTES): Promise<{ text: string } | { why: string }> {
  try {
    return { text: await readBoundedText(join(folder, file), { maxBytes, within: folder }) };
  } catch (error) {
    if (error instanceof UnsafeFileError) return { why: `${file} ${error.detail}` };
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { why: `${file} does not exist` };
    return { why: `${file} could not be read (${code ?? String(error)})` };
  }
}

/** `file` in `folder` parsed as YAML (`json` for JSON) into a mapping, or why it is not one. */
export async function readMapping(folder: string, file: string, json = false): Promise<{ value: Record<string, unknown> } | { why: string }> {
  const read = await readInside(folder, file, json ? LOCK_MAX_BYTES : YAML_MAX_BYTES);
  if ("why" in read) return read;
  let value: unknown;
  try {
    // The yaml library caps alias expansion itself (a "billion laughs" file is an error, not memory).
    // Its check for duplicate keys scans every earlier key per key: minutes on a monorepo's lockfile.
    value = json ? JSON.parse(read.text) : parseYaml(read.text, { uniqueKeys: false });
  } catch {
    return { why: `${file} is not valid ${json ? "JSON" : "YAML"}` };
  }
  if (!isMapping(value)) return { why: `${file} does not hold a mapping` };
  return { value };
}

/** Whether `value` is a plain object (not null, not an array). */
export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A package at the top of `node_modules`: a folder of its own, or a symlink and where it points. */
export type TopLevelEntry = { kind: "folder" } | { kind: "link"; target: string };

/**
 * The packages at the top of `installed` (`@scope/name` for scoped ones), without the dot
 * entries a tool keeps there (`.bin`, `.pnpm`, `.cache`). Symlinks are read, never followed.
 */
export async function topLevelPackages(installed: string): Promise<Map<string, TopLevelEntry> | { why: string }> {
  const names: string[] = [];
  try {
    for (const entry of await readdir(installed, { withFileTypes: true })) {
      if (entry.name.startsWith(".")) continue;
      if (entry.name.startsWith("@") && entry.isDirectory()) {
        for (const inner of await readdir(join(installed, entry.name))) if (!inner.startsWith(".")) names.push(`${entry.name}/${inner}`);
      } else names.push(entry.name);
      if (names.length > MAX_TOP_LEVEL) return { why: `node_modules holds more than ${MAX_TOP_LEVEL} packages` };
    }
    const found = new Map<string, TopLevelEntry>();
    const kinds = await inPool(names, async (name) => {
      const path = join(installed, ...name.split("/"));
      const stat = await lstat(path);
      if (stat.isSymbolicLink()) return { kind: "link", target: await readlink(path) } as const;
      return stat.isDirectory() ? ({ kind: "folder" } as const) : undefined;
    });
    names.forEach((name, index) => {
      const kind = kinds[index];
      if (kind !== undefined) found.set(name, kind);
    });
    return found;
  } catch (error) {
    return { why: `node_modules could not be listed (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
}

/**
 * The `version` of the package folder `name` at the top of `installed`, read inside `installed`
 * (a package.json that is a symlink, or under a folder leading out of it, is not read): `"?"`
 * when it cannot be read, undefined when the folder holds no package.json at all.
 */
export async function installedVersion(installed: string, name: string): Promise<string | undefined> {
  const read = await readInside(installed, `${name}/package.json`, MANIFEST_MAX_BYTES);
  if ("why" in read) return read.why.endsWith("does not exist") ? undefined : "?";
  try {
    const version = (JSON.parse(read.text) as { version?: unknown } | null)?.version;
    return typeof version === "string" ? version : "?";
  } catch {
    return "?";
  }
}

/** How many files are looked at at once: the file system's thread pool stays busy without a queue of thousands. */
const AT_ONCE = 16;

/** `work` on every item, a few at a time; the answers in the items' order. */
async function inPool<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const answers: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      answers[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, items.length) }, worker));
  return answers;
}

/** {@link installedVersion} of every package folder of `names`, read a few at a time. */
export async function installedVersions(installed: string, names: readonly string[]): Promise<Map<string, string | undefined>> {
  const versions = await inPool(names, (name) => installedVersion(installed, name));
  return new Map(names.map((name, index) => [name, versions[index]]));
}

/** The dependencies a manifest or an importer lists, by name: what it asks for, and whether it is optional. */
export type Direct = Map<string, { wanted: string; optional: boolean }>;

/**
 * The `dependencies`, `devDependencies` and `optionalDependencies` of a package.json or a pnpm
 * importer. `wanted` is the field's value when it is a string, else its `version` (pnpm 6 and 9
 * write `{ specifier, version }`). An optional dependency may be absent (another platform's).
 */
export function directDependencies(manifest: Record<string, unknown>): Direct {
  const direct: Direct = new Map();
  for (const field of ["dependencies", "devDependencies", "optionalDependencies"]) {
    const listed = manifest[field];
    if (!isMapping(listed)) continue;
    for (const [name, value] of Object.entries(listed)) {
      const wanted = typeof value === "string" ? value : isMapping(value) && typeof value.version === "string" ? value.version : undefined;
      if (wanted !== undefined) direct.set(name, { wanted, optional: field === "optionalDependencies" });
    }
  }
  return direct;
}

/** `@s/b@1.0.0` → `@s/b`: the name of a `name@rest` string, whose name may start with a scope's `@`. */
export function nameOf(nameAtRest: string): string {
  const at = nameAtRest.indexOf("@", 1);
  return at === -1 ? nameAtRest : nameAtRest.slice(0, at);
}

/** The result for lists of differences: `matches` when all are empty. */
export function verdict(extraneous: string[], missing: string[], otherVersion: string[], reinstall: string): InstallComparison {
  if (extraneous.length + missing.length + otherVersion.length === 0) return { state: "matches" };
  return { state: "differs", extraneous, missing, otherVersion, reinstall };
}
