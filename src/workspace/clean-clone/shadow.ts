/**
 * A linked `node_modules` must take writes: vite and vitest bundle a TypeScript config into
 * `node_modules/.vite-temp` and keep results under `node_modules/.vite`, babel-loader, nx and
 * others cache under `node_modules/.cache`. A plain symlink to the user's folder sends those
 * writes into the user's tree (sandbox off) or fails them (the sandbox shows the target
 * read-only: `ENOENT: mkdir …/node_modules/.vite-temp`, a false red on every vitest project).
 *
 * bubblewrap's throwaway overlay (`--overlay-src`, `--tmp-overlay`) arrived after 0.8.0, the
 * version Debian 12 and the App's image ship, so the clone gets a layer of its own instead: a
 * real folder in the clone holding one symlink per entry of the user's folder. What a tool
 * adds at the top (a cache folder) lands in the clone and goes with it; the packages are the
 * user's, read-only to a sandboxed suite, at the same real paths as before (node resolves a
 * package through its real path, so nothing resolves differently). The user's own tool caches
 * are left out: CI's fresh install has none, and a suite must not read or rewrite them.
 */
import { mkdir, readdir, symlink } from "node:fs/promises";
import { join } from "node:path";

/** Top-level folders of `node_modules` that only tools' caches live in; the clone starts without them, as CI does. */
export const TOOL_CACHES: ReadonlySet<string> = new Set([".cache", ".vite", ".vite-temp", ".vitest"]);

/** Whether a linked root gets a layer of its own rather than one symlink. */
export function takesShadowLayer(name: string): boolean {
  return name === "node_modules" || name.endsWith("/node_modules");
}

/**
 * Makes `destination` a folder of symlinks to every entry of `source` but its tool caches.
 * Returns how many entries were linked.
 */
export async function shadowLink(source: string, destination: string): Promise<number> {
  await mkdir(destination);
  const names = (await readdir(source)).filter((name) => !TOOL_CACHES.has(name));
  await Promise.all(names.map((name) => symlink(join(source, name), join(destination, name))));
  return names.length;
}
