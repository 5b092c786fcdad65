/**
 * A harness process for the descriptor-exhaustion test, started under a low `RLIMIT_NOFILE`:
 * it opens files until the kernel refuses one (EMFILE), then starts programs through exec and
 * through the App's git, and writes what each call gave to `<dir>/result.json` once it has let
 * go of the files again. Before the fix, node's "error" event for the failed spawn had no
 * listener yet and ended this process with exit code 1.
 */
import { closeSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { git } from "../../src/workspace/index.js";

const [dir] = process.argv.slice(2);
if (!dir) throw new Error("usage: emfile-child <dir>");

const held: number[] = [];
let refusedWith: string | undefined;
for (;;) {
  try {
    held.push(openSync("/dev/null", "r"));
  } catch (error) {
    refusedWith = (error as NodeJS.ErrnoException).code;
    break;
  }
}

const direct = await exec(["git", "--version"], { cwd: dir });
const logged = await exec(["git", "--version"], { cwd: dir, logPath: "/dev/null" }).then(
  (result) => ({ spawnError: result.spawnError }),
  (error: unknown) => ({ thrown: (error as Error).name }),
);
const viaGit = await git(["--version"], { cwd: dir }).then(
  () => ({ failureClass: "none" }),
  (error: unknown) => ({ name: (error as Error).name, failureClass: (error as { failureClass?: string }).failureClass }),
);
for (const fd of held) closeSync(fd);
const after = await exec(["git", "--version"], { cwd: dir });

writeFileSync(
  join(dir, "result.json"),
  JSON.stringify({
    refusedWith,
    held: held.length,
    direct: { exitCode: direct.exitCode, spawnError: direct.spawnError, tail: direct.tail },
    logged,
    viaGit,
    after: { exitCode: after.exitCode },
  }),
);
