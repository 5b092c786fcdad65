/**
 * Builds a project as pnpm leaves it (pnpm is not needed to run the tests): a committed
 * `pnpm-lock.yaml` in one of pnpm's three formats, and a `node_modules` laid out as pnpm lays it
 * out: `.modules.yaml`, the virtual store `.pnpm/<name>@<version>/node_modules/<name>`, its copy
 * of the lockfile in `.pnpm/lock.yaml`, and a symlink at the top per dependency of the project.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** A dependency of the root project: its name, its lockfile version, and its package.json field. */
export interface Dependency {
  name: string;
  version: string;
  field?: "dependencies" | "devDependencies" | "optionalDependencies";
}

/** A lockfile format pnpm writes: 5.4 (pnpm 7), 6.0 (pnpm 8), 9.0 (pnpm 9 and 10). */
export type PnpmFormat = 5 | 6 | 9;

const quoted = (key: string): string => (key.startsWith("@") ? `'${key}'` : key);

/** The text of a pnpm lockfile in `format` for `direct` dependencies and every package of `graph` (`name@version`). */
export function pnpmLock(format: PnpmFormat, direct: readonly Dependency[], graph: readonly string[]): string {
  const fields = ["dependencies", "devDependencies", "optionalDependencies"] as const;
  const lines: string[] = [`lockfileVersion: ${format === 5 ? "5.4" : `'${format}.0'`}`, ""];
  if (format !== 5) lines.push("settings:", "  autoInstallPeers: true", "  excludeLinksFromLockfile: false", "");
  if (format === 5) {
    lines.push("specifiers:", ...direct.map((dep) => `  ${quoted(dep.name)}: ^${dep.version}`), "");
  }
  if (format === 9) lines.push("importers:", "", "  .:");
  const indent = format === 9 ? "    " : "";
  for (const field of fields) {
    const listed = direct.filter((dep) => (dep.field ?? "dependencies") === field);
    if (listed.length === 0) continue;
    lines.push(`${indent}${field}:`);
    for (const dep of listed) {
      if (format === 5) lines.push(`${indent}  ${quoted(dep.name)}: ${dep.version}`);
      else lines.push(`${indent}  ${quoted(dep.name)}:`, `${indent}    specifier: ^${dep.version}`, `${indent}    version: ${dep.version}`);
    }
    lines.push("");
  }
  lines.push("packages:", "");
  for (const path of graph) {
    const at = path.indexOf("@", 1);
    const key = format === 5 ? `/${path.slice(0, at)}/${path.slice(at + 1)}` : format === 6 ? `/${path}` : path;
    lines.push(`  ${quoted(key)}:`, "    resolution: {integrity: sha512-AAAA}", ...(format === 9 ? [] : ["    dev: false"]), "");
  }
  if (format === 9) {
    lines.push("snapshots:", "");
    for (const path of graph) lines.push(`  ${quoted(path)}: {}`, "");
  }
  return lines.join("\n");
}

/** The `.modules.yaml` pnpm writes, hoisting `publicHoisted` (`name@version`) to the top. */
export function modulesYaml(publicHoisted: readonly string[] = []): string {
  return [
    "hoistPattern:",
    "  - '*'",
    "hoistedDependencies:",
    ...publicHoisted.flatMap((path) => [`  ${quoted(path)}:`, `    ${quoted(path.slice(0, path.indexOf("@", 1)))}: public`]),
    "included:",
    "  dependencies: true",
    "  devDependencies: true",
    "  optionalDependencies: true",
    "layoutVersion: 5",
    "nodeLinker: isolated",
    "packageManager: pnpm@9.15.0",
    "publicHoistPattern: []",
    "skipped: []",
    "virtualStoreDir: .pnpm",
    "",
  ].join("\n");
}

/** Puts `name@version` into the virtual store of `nodeModules`, with its package.json. Returns its folder. */
export function storePackage(nodeModules: string, path: string): string {
  const at = path.indexOf("@", 1);
  const name = path.slice(0, at);
  const folder = join(nodeModules, ".pnpm", path.replace(/\//g, "+"), "node_modules", ...name.split("/"));
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "package.json"), JSON.stringify({ name, version: path.slice(at + 1), main: "index.js" }));
  writeFileSync(join(folder, "index.js"), `module.exports = ${JSON.stringify(path)};\n`);
  return folder;
}

/** Links `name` at the top of `nodeModules` to its store folder for `name@version`, relative, as pnpm does. */
export function linkTop(nodeModules: string, path: string): void {
  const name = path.slice(0, path.indexOf("@", 1));
  const folder = storePackage(nodeModules, path);
  const link = join(nodeModules, ...name.split("/"));
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(relative(dirname(link), folder), link);
}

/**
 * Writes a pnpm project into `dir`: package.json, the committed lockfile, and its install (every
 * direct dependency linked at the top, the whole graph in the store, `.pnpm/lock.yaml`).
 */
export function pnpmProject(dir: string, format: PnpmFormat, direct: readonly Dependency[], graph: readonly string[]): void {
  const manifest: Record<string, unknown> = { name: "project", version: "1.0.0" };
  for (const dep of direct) {
    const field = dep.field ?? "dependencies";
    manifest[field] = { ...((manifest[field] as object | undefined) ?? {}), [dep.name]: `^${dep.version}` };
  }
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
  const lock = pnpmLock(format, direct, graph);
  writeFileSync(join(dir, "pnpm-lock.yaml"), lock);
  const nodeModules = join(dir, "node_modules");
  mkdirSync(join(nodeModules, ".pnpm"), { recursive: true });
  writeFileSync(join(nodeModules, ".modules.yaml"), modulesYaml());
  writeFileSync(join(nodeModules, ".pnpm", "lock.yaml"), lock);
  for (const path of graph) storePackage(nodeModules, path);
  for (const dep of direct) linkTop(nodeModules, `${dep.name}@${dep.version}`);
}
