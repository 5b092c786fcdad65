/**
 * rustup installs `cargo`, `rustc` and the rest as proxies: links to one `rustup` program that
 * looks up the toolchain to run in RUSTUP_HOME, which defaults to `$HOME/.rustup`. A step's HOME
 * is private, so a proxy finds no toolchain and exits 1 with "rustup could not choose a version
 * of cargo to run": every crate whose cargo came from rustup (the usual install) failed its
 * suite, sandboxed or not, and the verdict blamed the change. A step whose program is such a
 * proxy is therefore told where the host's rustup home is (and the sandbox shows it read-only).
 */
import { realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";
import { locateProgram, stepProgram } from "./program-view.js";

/** The host's rustup home: `RUSTUP_HOME` when it names a folder, else `<home>/.rustup`. */
export function hostRustupHome(env: NodeJS.ProcessEnv, home: string): string {
  const named = env.RUSTUP_HOME;
  return named !== undefined && isAbsolute(named) ? named : join(home, ".rustup");
}

/**
 * The rustup home the step's program needs, or undefined when the program is no rustup proxy
 * (a distribution's own cargo, say) or the host has no rustup home.
 */
export function rustupHomeForStep(argv: readonly string[], cwd: string, searchPath: string, rustupHome: string): string | undefined {
  const program = stepProgram(argv);
  const found = program === undefined ? undefined : locateProgram(program, cwd, searchPath);
  if (found === undefined || !isRustupProxy(found)) return undefined;
  return isDirectory(rustupHome) ? rustupHome : undefined;
}

/** A proxy is `rustup` itself, a symbolic link to it, or a hard link of it beside it (rustup makes either). */
function isRustupProxy(found: string): boolean {
  try {
    const real = realpathSync(found);
    if (basename(real) === "rustup") return true;
    const program = statSync(real);
    const rustup = statSync(join(dirname(found), "rustup"));
    return program.ino === rustup.ino && program.dev === rustup.dev;
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
