/**
 * A linked dependency folder must not lead back into the target's own tree: an editable Python
 * install (`.pth`, `.egg-link`, `direct_url.json`, an `__editable__` finder) naming the target's
 * `src`, or a workspace package in `node_modules` that is a symlink to `../packages/x`, makes the
 * clean clone import the target's uncommitted files, a false green. Such a folder is refused
 * with the file named; `clean_clone.provision: true` installs afresh in the clone instead.
 */
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";

/** True when `path` lies inside `root` (or is `root`); both are absolute, so `relative` climbs or descends. */
function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== ".." && !rel.startsWith(`..${sep}`);
}

async function entries(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).map((name) => join(dir, name));
  } catch {
    // Stryker disable next-line ArrayDeclaration: a relative name left here is looked up from the process's folder, where lstat and readdir find nothing
    return [];
  }
}

/** Symlinks among the first two levels of `root` (`node_modules/x`, `node_modules/@scope/x`). */
async function shallowSymlinks(root: string): Promise<string[]> {
  const links: string[] = [];
  for (const first of await entries(root)) {
    // An entry readdir just listed fails lstat only when it vanished in between.
    const info = await lstat(first).catch(() => undefined);
    // Stryker disable next-line OptionalChaining: see above (a race only)
    if (info?.isSymbolicLink()) links.push(first);
    // Stryker disable next-line OptionalChaining: see above, and `pop()` of a split is never undefined
    else if (info?.isDirectory() && first.split(sep).pop()?.startsWith("@")) {
      // Stryker disable next-line OptionalChaining: see above (a race only)
      for (const second of await entries(first)) if ((await lstat(second).catch(() => undefined))?.isSymbolicLink()) links.push(second);
    }
  }
  return links;
}

/** The `site-packages` folders of a virtualenv or `__pypackages__` root. */
async function sitePackages(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const lib of ["lib", "lib64"]) {
    for (const version of await entries(join(root, lib))) found.push(join(version, "site-packages"));
  }
  for (const version of await entries(root)) found.push(join(version, "lib"));
  return found;
}

const EDITABLE_FILE = /(\.pth|\.egg-link|^__editable__.*finder\.py|direct_url\.json)$/;

/** Files of a site-packages folder that can point an import elsewhere. */
async function editableRecords(site: string): Promise<string[]> {
  const files: string[] = [];
  for (const path of await entries(site)) {
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
  const problems: string[] = [];
  const leaks = (path: string): boolean => inside(top, path) && !inside(root, path);
  for (const link of await shallowSymlinks(root)) {
    const target = resolve(dirname(link), await readlink(link));
    if (leaks(target)) problems.push(`${relative(top, link)} is a symlink to ${relative(top, target) || "."} in the target's own tree`);
  }
  for (const site of await sitePackages(root)) {
    for (const file of await editableRecords(site)) {
      const text = await readFile(file, "utf8").catch(() => undefined);
      if (text === undefined) continue;
      const leak = mentionsOf(text, top).find(leaks);
      if (leak !== undefined) problems.push(`${relative(top, file)} points at ${relative(top, leak) || "."} in the target's own tree (an editable install)`);
    }
  }
  return problems;
}
