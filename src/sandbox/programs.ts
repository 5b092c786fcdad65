/** Finding a program the App starts itself (bubblewrap, prlimit, the network helpers). */
import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";

/** The absolute path of `name` in the first of `dirs` where it is an executable file. */
export function findProgramIn(name: string, dirs: readonly string[]): string | undefined {
  for (const dir of dirs) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}
