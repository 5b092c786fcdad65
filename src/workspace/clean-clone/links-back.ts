/**
 * A linked dependency folder must not lead back into the target's own tree: an editable Python
 * install (`.pth`, `.egg-link`, `direct_url.json`, an `__editable__` finder) naming the target's
 * `src`, or a workspace package in `node_modules` that is a symlink to `../packages/x`, makes the
 * clean clone import the target's uncommitted files, a false green. Such a folder is refused
 * with the file named; `clean_clone.provision: true` installs afresh in the clone instead.
 */
import { lstat, opendir, readlink, realpath } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { readBoundedText, UnsafeFileError } from "../../files/index.js";

/** An editable-install record is a few lines (a finder module a few KiB); a larger one is not checked but refused. */
const MAX_RECORD_BYTES = 1024 * 1024;
/** The most names read from one folder of the walk: a site-packages of thousands of packages fits many times over. */
const MAX_ENTRIES = 50_000;

/** True when `path` lies inside `root` (or is `root`); both are absolute, so `relative` climbs or descends. */
function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== ".." && !rel.startsWith(`..${sep}`);
}

/** The walk of one linked folder: what it found too large to list or read, in sentences naming the path. */
interface Walk {
  top: string;
  /** The linked folder's real location: the walk never leaves it, whatever symlinks inside say. */
  realRoot: string;
  problems: string[];
}

/**
 * The entries of `dir`, as paths, bounded to {@link MAX_ENTRIES}. A folder reached through a
 * symlink that leads out of the linked folder is not listed (a `lib64 -> lib` stays inside and is).
 */
async function entries(walk: Walk, dir: string): Promise<string[]> {
  const found: string[] = [];
  try {
    if (!inside(walk.realRoot, await realpath(dir))) return [];
    const listing = await opendir(dir);
    for await (const entry of listing) {
      if (found.length === MAX_ENTRIES) {
        walk.problems.push(`${relative(walk.top, dir)} has more than ${MAX_ENTRIES} entries, too many to check`);
        break;
      }
      found.push(join(dir, entry.name));
    }
  } catch {
    // Absent or not a folder: nothing to list. (A break above closes the listing itself.)
  }
  return found;
}

/** Symlinks among the first two levels of `root` (`node_modules/x`, `node_modules/@scope/x`). */
async function shallowSymlinks(walk: Walk, root: string): Promise<string[]> {
  const links: string[] = [];
  for (const first of await entries(walk, root)) {
    // An entry readdir just listed fails lstat only when it vanished in between.
    const info = await lstat(first).catch(() => undefined);
    // Stryker disable next-line OptionalChaining: see above (a race only)
    if (info?.isSymbolicLink()) links.push(first);
    // Stryker disable next-line OptionalChaining: see above, and `pop()` of a split is never undefined
    else if (info?.isDirectory() && first.split(sep).pop()?.startsWith("@")) {
      // Stryker disable next-line OptionalChaining: see above (a race only)
      for (const second of await entries(walk, first)) if ((await lstat(second).catch(() => undefined))?.isSymbolicLink()) links.push(second);
    }
  }
  return links;
}

/** The `site-packages` folders of a virtualenv or `__pypackages__` root. */
async function sitePackages(walk: Walk, root: string): Promise<string[]> {
  const found: string[] = [];
  for (const lib of ["lib", "lib64"]) {
    for (const version of await entries(walk, join(root, lib))) found.push(join(version, "site-packages"));
  }
  for (const version of await entries(walk, root)) found.push(join(version, "lib"));
  return found;
}

const EDITABLE_FILE = /(\.pth|\.egg-link|^__editable__.*finder\.py|direct_url\.json)$/;

/** Files of a site-packages folder that can point an import elsewhere. */
async function editableRecords(walk: Walk, site: string): Promise<string[]> {
  const files: string[] = [];
  for (const path of await entries(walk, site)) {
    const name = path.split(sep).pop() ?? "";
    if (EDITABLE_FILE.test(name)) files.push(path);
    else if (name.endsWith(".dist-info")) files.push(join(path, "direct_url.json"));
  }
  return files;
}

/** Absolute paths under `top` that `text` mentions (plain or as a `file://` URL). */
function mentionsOf(text: string, top: string): string[] {
  const found: string[] = [];
  for (let at = text.indexOf(top); at !== -1; at = text.indexOf(top, at + top.length)) {
    // Stryker disable next-line OptionalChaining,Regex: a pattern that may match nothing matches at the start of any text, anchored or not
    const rest = text.slice(at).match(/^[^\s"'<>,;)\]]*/)?.[0] ?? top;
    // Stryker disable next-line Regex: the path is only compared and named through relative(), which drops every trailing slash
    found.push(decodeURIComponent(rest.replace(/\/+$/, "")));
  }
  return found;
}

/**
 * Lists, as sentences naming the file, every way the linked folder `name` of the target at
 * `top` leads back into the target outside that folder. Empty when it does not.
 */
export async function pointsBackIntoTarget(top: string, name: string): Promise<string[]> {
  const root = join(top, ...name.split("/"));
  const walk: Walk = { top, realRoot: await realpath(root).catch(() => root), problems: [] };
  const problems = walk.problems;
  const leaks = (path: string): boolean => inside(top, path) && !inside(root, path);
  for (const link of await shallowSymlinks(walk, root)) {
    const target = resolve(dirname(link), await readlink(link));
    if (leaks(target)) problems.push(`${relative(top, link)} is a symlink to ${relative(top, target) || "."} in the target's own tree`);
  }
  for (const site of await sitePackages(walk, root)) {
    for (const file of await editableRecords(walk, site)) {
      const text = await readRecord(walk, file);
      if (text === undefined) continue;
      const leak = mentionsOf(text, top).find(leaks);
      if (leak !== undefined) problems.push(`${relative(top, file)} points at ${relative(top, leak) || "."} in the target's own tree (an editable install)`);
    }
  }
  return problems;
}

/**
 * The text of an editable-install record, bounded: the linked folder is the repository's (and
 * its agents'), and a FIFO named `x.pth` must not hang the check. A record that is not a file
 * (a folder, a FIFO) is no record; one that cannot be checked (a symlink, which Python would
 * follow, or a file over the cap) is a problem, so it cannot hide a way back into the target.
 */
async function readRecord(walk: Walk, file: string): Promise<string | undefined> {
  try {
    return await readBoundedText(file, { maxBytes: MAX_RECORD_BYTES });
  } catch (error) {
    if (!(error instanceof UnsafeFileError)) return undefined;
    if (error.reason === "symlink" || error.reason === "too-large") walk.problems.push(`${relative(walk.top, file)} ${error.detail}, so it cannot be checked`);
    return undefined;
  }
}
