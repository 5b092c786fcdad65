/**
 * Copies installed npm packages (with everything they depend on, as the harness's own lockfile
 * resolved it) from the harness's `node_modules` into a test project's, so a test can run a real
 * tool (vitest) in a repository it builds, without a registry. Copies, never links: a test
 * project's tool must not be able to write into the harness's own install.
 */
import { cpSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join, posix } from "node:path";

interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  bin?: Record<string, string> | string;
}

/** Where node would find `name` from the package installed at `key` (`node_modules/a/node_modules/b`). */
function resolveFrom(packages: Record<string, LockEntry>, key: string, name: string): string | undefined {
  for (let at = key; ;) {
    const candidate = `${at}/node_modules/${name}`;
    if (packages[candidate] !== undefined) return candidate;
    const cut = at.lastIndexOf("/node_modules/");
    if (cut < 0) break;
    at = at.slice(0, cut);
  }
  return packages[`node_modules/${name}`] !== undefined ? `node_modules/${name}` : undefined;
}

/**
 * Copies `names` and their dependency closure from `harnessRoot/node_modules` into
 * `projectRoot/node_modules`, and links their programs into `node_modules/.bin`. Returns how
 * many packages were copied.
 */
export function copyInstalledPackages(harnessRoot: string, names: readonly string[], projectRoot: string): number {
  const lock = JSON.parse(readFileSync(join(harnessRoot, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
  const packages = lock.packages;
  const wanted = new Set<string>();
  const queue = names.map((name) => `node_modules/${name}`);
  while (queue.length > 0) {
    const key = queue.pop() as string;
    if (wanted.has(key) || packages[key] === undefined) continue;
    wanted.add(key);
    const entry = packages[key];
    const deps = { ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies };
    for (const dep of Object.keys(deps)) {
      const found = resolveFrom(packages, key, dep);
      if (found !== undefined) queue.push(found);
    }
  }
  for (const key of wanted) {
    const from = join(harnessRoot, ...key.split("/"));
    // An optional package for another platform is in the lockfile but not installed.
    try {
      cpSync(from, join(projectRoot, ...key.split("/")), { recursive: true, verbatimSymlinks: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  const bin = join(projectRoot, "node_modules", ".bin");
  mkdirSync(bin, { recursive: true });
  for (const name of names) {
    const entry = packages[`node_modules/${name}`]?.bin;
    const programs = typeof entry === "string" ? { [name]: entry } : (entry ?? {});
    for (const [program, file] of Object.entries(programs)) symlinkSync(posix.join("..", name, file), join(bin, program));
  }
  return wanted.size;
}
