/**
 * What a killed App leaves behind is named after it: `<prefix><pid>-…` (scratch folders,
 * cgroups). An entry whose pid is no running process is an orphan; entries of live processes
 * (this App, another worker on the same machine) stay.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Whether `pid` is a running process (one of another user counts: EPERM). */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Calls `remove` on each orphan named `<prefix><pid>-…` in `root`; returns how many it removed. */
export function removeOrphans(root: string, prefix: string, remove: (path: string) => boolean): number {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return 0;
  }
  const owned = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(\\d+)-`);
  let removed = 0;
  for (const name of names) {
    const match = owned.exec(name);
    if (!match || processAlive(Number(match[1]))) continue;
    if (remove(join(root, name))) removed += 1;
  }
  return removed;
}
