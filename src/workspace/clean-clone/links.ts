/**
 * Dependency and interpreter roots are ignored in git, so a fresh clone lacks them and a suite
 * run there fails for reasons that are not the change's. They are linked from the target
 * instead of reinstalled, and excluded in the clone: a `.gitignore` entry for a directory
 * (`node_modules/`) does not match a symlink standing in its place. A `node_modules` is a
 * folder of the clone's own holding a symlink per package (shadow.ts), so tools can write their
 * caches into it.
 */
import { appendFile, lstat, mkdir, symlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { CleanCloneBuildError, CleanCloneOptionsError } from "./errors.js";
import { compareInstallWithLock, describeInstallDifference } from "./installed-vs-lock.js";
import { pointsBackIntoTarget } from "./links-back.js";
import { shadowLink, takesShadowLayer } from "./shadow.js";

/**
 * Roots linked when a caller names none, per ecosystem: Node (`node_modules`,
 * `bower_components`), Python (`.venv`, `venv`, `__pypackages__`), Ruby (`vendor/bundle`,
 * `.bundle`), PHP and Go (`vendor`). `vendor/bundle` comes before `vendor` so a Ruby project
 * whose `vendor/` holds tracked files still gets only its bundle linked.
 */
export const DEFAULT_CLEAN_CLONE_LINKS: readonly string[] = [
  "node_modules",
  "bower_components",
  ".venv",
  "venv",
  "__pypackages__",
  "vendor/bundle",
  ".bundle",
  "vendor",
];

/**
 * Checks a link name: a relative path inside the repository, `/`-separated, with no empty,
 * `.` or `..` segment and not inside `.git`. Throws {@link CleanCloneOptionsError} naming `field`.
 */
export function validateLinkName(name: string, field: string): string {
  const problem = linkProblem(name);
  if (problem) throw new CleanCloneOptionsError(field, name, problem);
  return name;
}

function linkProblem(name: string): string | undefined {
  if (name === "") return "must not be empty";
  if (name.includes("\0") || name.includes("\n")) return "must not contain NUL or newline";
  if (name.startsWith("/")) return "must be relative to the repository root";
  const segments = name.replace(/\/+$/, "").split("/");
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) return "must not contain empty, '.' or '..' segments";
  if (segments[0] === ".git") return "must not point into .git";
  return undefined;
}

/** An anchored gitignore pattern matching exactly `name` (globs and specials escaped). */
export function excludePattern(name: string): string {
  const escaped = name.replace(/\/+$/, "").replace(/[\\*?[\]]/g, (char) => `\\${char}`);
  return `/${escaped.replace(/ $/, "\\ ")}`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
    // Stryker disable next-line BlockStatement: the one caller negates the answer, and undefined is as false as false
  } catch {
    return false;
  }
}

/**
 * Links each root present in `targetTop` and absent from `cloneDir` into the clone, and
 * appends every linked name to the clone's `.git/info/exclude`. Returns the names linked.
 * A root the target tracks or does not have is left alone. A root that leads back into the
 * target's own tree (see links-back.ts) is refused, naming the file; so is a `node_modules`
 * whose install differs from the lockfile committed beside it (installed-vs-lock.ts), naming
 * the packages. `notCompared` says which could not be compared, and why.
 */
export async function linkDependencyRoots(
  targetTop: string,
  cloneDir: string,
  names: readonly string[],
  repo: string,
): Promise<{ linked: string[]; notCompared: string[] }> {
  const linked: string[] = [];
  const leaks: string[] = [];
  const stale: string[] = [];
  const notCompared: string[] = [];
  try {
    for (const raw of names) {
      const name = raw.replace(/\/+$/, "");
      const source = join(targetTop, ...name.split("/"));
      const destination = join(cloneDir, ...name.split("/"));
      // lstat through the clone path also sees an earlier link as a parent (vendor vs vendor/bundle).
      if (!(await exists(source)) || (await exists(destination))) continue;
      leaks.push(...(await pointsBackIntoTarget(targetTop, name)));
      if (name === "node_modules" || name.endsWith("/node_modules")) {
        const comparison = await compareInstallWithLock(source, dirname(destination));
        if (comparison.state === "differs") stale.push(describeInstallDifference(name, comparison));
        else if (comparison.state === "not-compared") notCompared.push(`${name}: ${comparison.why}`);
      }
      await mkdir(dirname(destination), { recursive: true });
      // A node_modules takes tools' cache writes in a layer of the clone's own (shadow.ts).
      if (takesShadowLayer(name)) await shadowLink(source, destination);
      else await symlink(source, destination);
      linked.push(name);
    }
    if (linked.length > 0) {
      const exclude = join(cloneDir, ".git", "info", "exclude");
      await mkdir(dirname(exclude), { recursive: true });
      const lines = linked.map(excludePattern).join("\n");
      await appendFile(exclude, `\n# linked by the clean-clone check\n${lines}\n`);
    }
  } catch (error) {
    throw new CleanCloneBuildError("link", repo, error instanceof Error ? error.message : String(error));
  }
  if (leaks.length > 0) {
    const list = leaks.join("; ");
    throw new CleanCloneBuildError(
      "link",
      repo,
      `a linked folder leads back into the target, so the clean clone would import the target's uncommitted files: ${list} (provision the clean clone afresh instead: clean_clone.provision: true in .github/harness.yml, or harness clean-clone --provision)`,
    );
  }
  if (stale.length > 0) throw new CleanCloneBuildError("link", repo, stale.join("; "));
  return { linked, notCompared };
}
