/**
 * Tools under the user's home (pyenv, nvm, asdf, `~/.local/bin`) are on the PATH a step gets but
 * not in the folders the sandbox shows, so inside the step the shell skips them and runs another
 * program of the same name (`/usr/bin/python3` without the project's packages) or none (exit
 * 127), and the verdict blames the repository. The program a step's command names is therefore
 * resolved on the host as the step's PATH would find it, and its installation is shown read-only:
 * the folder it is in, the installation around a `bin` (or pyenv's `shims`) folder, and the same
 * for the file a link leads to and for the interpreter a script's `#!` line names. What cannot be
 * shown without showing a home, a secret or the OS temporary folder is refused, naming
 * `HARNESS_SANDBOX_READ`, before anything starts.
 */
import { readdirSync, readSync, openSync, closeSync, realpathSync, statSync } from "node:fs";
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { isInside } from "./git-view.js";
import { findProgramIn } from "./programs.js";

/** Folders shown for a step's program, or why it cannot be shown. */
export type ProgramView = { readable: string[] } | { refused: string };

/** What decides whether a program's folders may be shown. */
export interface ProgramViewHost {
  /** Whether the step already sees a path (system folders, operator's folders, the step's own). */
  visible: (path: string) => boolean;
  /** The user's home: never shown whole, nor any folder above it. */
  home: string;
  /** The OS temporary folder, where other steps' scratch folders live: never shown. */
  tmp: string;
  /** Paths the sandbox hides wherever they would be visible (the App's folder, HARNESS_HOME, keys). */
  masked: readonly string[];
}

/** Names of folders and files that hold credentials; a folder holding one, or inside one, is never shown. */
const SECRET_NAMES = new Set([
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".kube",
  ".docker",
  ".netrc",
  ".git-credentials",
  ".npmrc",
  ".pypirc",
  ".password-store",
  ".config",
]);
/** Folders whose parent is an installation (`<prefix>/bin/python`, pyenv's `<root>/shims/python`). */
const BIN_FOLDERS = new Set(["bin", "sbin", "shims"]);
/** Per-user data roots: only their `bin` and `lib` are an installation, the rest is the user's data. */
const DATA_ROOTS = new Set([".local"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=\S*$/;
const PLAIN_WORD = /^[A-Za-z0-9_./+@%:,-]+$/;

/** The program a step starts: argv[0], or the first word of a `/bin/sh -c` command string. */
export function stepProgram(argv: readonly string[]): string | undefined {
  const [first, flag, command] = argv;
  if (first === undefined) return undefined;
  if (!(basename(first) === "sh" || basename(first) === "bash") || (flag !== "-c" && flag !== "-lc") || command === undefined) return first;
  const words = command.trim().split(/\s+/);
  let index = 0;
  while (index < words.length && ASSIGNMENT.test(words[index] ?? "")) index += 1;
  if (words[index] === "exec") index += 1;
  const word = words[index];
  return word !== undefined && PLAIN_WORD.test(word) ? word : undefined;
}

/** `program` as the step would find it: a path against `cwd`, a name on `searchPath`; undefined when it is neither. */
export function locateProgram(program: string, cwd: string, searchPath: string): string | undefined {
  if (program.includes("/")) return resolve(cwd, program);
  return findProgramIn(
    program,
    searchPath.split(delimiter).filter((dir) => isAbsolute(dir)),
  );
}

/**
 * The folders a step must read to run `found` (an absolute path on the host), beyond what it
 * already sees; or why they cannot be shown. A program that does not exist needs nothing: the
 * step then fails in its own words.
 */
export function programView(found: string, searchPath: string, host: ProgramViewHost): ProgramView {
  const readable = new Set<string>();
  for (const path of chainOf(found, searchPath)) {
    // `/bin/sh` is visible through the system's `/bin` link: the folders' links are resolved, not the file's.
    const folder = realOf(dirname(path));
    if (host.visible(path) || (folder !== undefined && host.visible(join(folder, basename(path))))) continue;
    for (const folder of installationOf(path)) {
      const refusal = refusalOf(folder, host);
      if (refusal !== undefined) {
        return {
          refused: `${found} is not visible in the sandbox, and ${folder} ${refusal}: an operator who trusts that installation adds its folder to HARNESS_SANDBOX_READ, or installs the program under /usr or /opt`,
        };
      }
      readable.add(folder);
    }
  }
  return { readable: [...readable] };
}

/** The program, the file its links lead to, and the interpreter its `#!` line names (and that one's file). */
function chainOf(found: string, searchPath: string): string[] {
  const real = realOf(found);
  if (real === undefined) return [];
  const chain = [found, real];
  const interpreter = shebangOf(real, searchPath);
  if (interpreter !== undefined) {
    const target = realOf(interpreter);
    if (target !== undefined) chain.push(interpreter, target);
  }
  return [...new Set(chain)];
}

/** The folders of the installation `path` belongs to. */
function installationOf(path: string): string[] {
  const folder = dirname(path);
  if (!BIN_FOLDERS.has(basename(folder))) return [folder];
  const prefix = dirname(folder);
  if (DATA_ROOTS.has(basename(prefix))) return [folder, join(prefix, "lib")].filter(isDirectory);
  return [prefix];
}

/** Why `folder` must not be shown, or undefined when it may be. */
export function refusalOf(folder: string, host: ProgramViewHost): string | undefined {
  if (folder === "/" || isInside(host.home, folder)) return "is the user's home or holds it";
  if (isInside(folder, host.tmp)) return "is in the OS temporary folder, which steps never see";
  if (folder.split(sep).some((segment) => SECRET_NAMES.has(segment))) return "is inside a folder that holds credentials";
  if (host.masked.some((mask) => isInside(folder, mask) || isInside(mask, folder)))
    return "is, or holds, a folder the sandbox hides (the App's own, its data, its key)";
  const secret = entriesOf(folder).find((name) => SECRET_NAMES.has(name));
  if (secret !== undefined) return `holds ${secret}`;
  return undefined;
}

/**
 * The folders a step must be shown to run the program its command names, or why it cannot be.
 * A step with a virtual environment (`VIRTUAL_ENV`, the worktree's `.venv`) is also shown the
 * interpreter it was made from, which anything the step starts may run (an agent's `python -m pytest`).
 */
export function stepView(argv: readonly string[], cwd: string, searchPath: string, venv: string | undefined, host: ProgramViewHost): ProgramView {
  const program = stepProgram(argv);
  const found = [program === undefined ? undefined : locateProgram(program, cwd, searchPath), venv === undefined ? undefined : join(venv, "bin", "python")];
  const readable: string[] = [];
  for (const path of found) {
    if (path === undefined) continue;
    const view = programView(path, searchPath, host);
    if ("refused" in view) return view;
    readable.push(...view.readable);
  }
  return { readable };
}

/** The interpreter a script's first line names: an absolute path, or `env <name>` looked up on `searchPath`. */
function shebangOf(path: string, searchPath: string): string | undefined {
  const head = Buffer.alloc(256);
  let length = 0;
  let fd: number | undefined;
  try {
    // A FIFO would block the read: only regular files are opened.
    if (!statSync(path).isFile()) return undefined;
    fd = openSync(path, "r");
    length = readSync(fd, head, 0, head.length, 0);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const line = head.subarray(0, length).toString("utf8").split("\n")[0] ?? "";
  if (!line.startsWith("#!")) return undefined;
  const [program = "", first] = line.slice(2).trim().split(/\s+/);
  if (basename(program) === "env" && first !== undefined && !first.startsWith("-")) return locateProgram(first, "/", searchPath);
  return isAbsolute(program) ? program : undefined;
}

function realOf(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function entriesOf(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
