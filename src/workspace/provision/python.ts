/**
 * The Python rungs of the provisioning ladder. A Python project's suite imports the package under
 * test from wherever the interpreter finds it first; without an environment of its own that is
 * the interpreter's site-packages, where an installed copy (not the worktree's source) may sit.
 * So every Python rung makes a virtual environment in the worktree (`.venv`) and installs the
 * project into it editable, which puts the worktree's own source on the import path.
 */
import { readdirSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { readBoundedTextSync } from "../../files/index.js";
import { findProgramIn } from "../../sandbox/index.js";

/** The folder of the virtual environment every Python rung makes, relative to the worktree. */
export const VENV_DIR = ".venv";

/** The Python rungs, as named in a receipt's source. */
export type PythonSource = "uv" | "poetry" | "pip";

/** A Python rung's command: a short shell script, and what a reader should know about it. */
export interface PythonRung {
  source: PythonSource;
  /** The script, run as `/bin/sh -c` (it is also the receipt's `cmd`). */
  cmd: string;
  /** Set when the lock's own tool is not installed and the project is installed with pip instead. */
  note?: string;
}

/** Optional-dependency groups a suite usually needs (`pip install -e .[test]`). */
const TEST_EXTRAS = ["test", "tests", "testing", "dev"];
const REQUIREMENTS = /^requirements([._-][A-Za-z0-9._-]*)?\.txt$/;
/** A pyproject.toml larger than this is not read for extras (real ones are a few KiB). */
const MAX_PYPROJECT_BYTES = 1024 * 1024;

/**
 * The Python rung for `worktree`, first match wins: `uv.lock`, `poetry.lock`,
 * `requirements*.txt`, then an installable `pyproject.toml` or a `setup.py`; undefined when the
 * worktree is no Python project. `searchPath` is where uv and poetry are looked for: a lock whose
 * tool is missing falls back to pip, and the rung's `note` says so.
 */
export function pythonRung(worktree: string, searchPath: string): PythonRung | undefined {
  const installable = isInstallable(worktree);
  const venv = `python3 -m venv ${VENV_DIR}`;
  const pip = `${VENV_DIR}/bin/python -m pip install`;
  const project = installable ? `${pip} -e ${shellWord(`.${extrasOf(worktree)}`)}` : undefined;
  const withPip = (why: string): PythonRung => ({
    source: "pip",
    cmd: [venv, project ?? `${pip} --upgrade pip`].join(" && "),
    note: `${why}: the project was installed with pip from pyproject.toml, so its dependencies are not the locked versions`,
  });
  const dirs = searchPath.split(delimiter).filter((dir) => isAbsolute(dir));
  if (isFile(join(worktree, "uv.lock"))) {
    if (findProgramIn("uv", dirs) !== undefined) return { source: "uv", cmd: "uv sync --frozen" };
    return withPip("uv.lock is uv's, and uv is not installed");
  }
  if (isFile(join(worktree, "poetry.lock"))) {
    if (findProgramIn("poetry", dirs) !== undefined) return { source: "poetry", cmd: `poetry install --no-interaction` };
    return withPip("poetry.lock is poetry's, and poetry is not installed");
  }
  const requirements = requirementFiles(worktree);
  if (requirements.length > 0) {
    const steps = [venv, `${pip} ${requirements.map((file) => `-r ${shellWord(file)}`).join(" ")}`];
    if (project !== undefined) steps.push(project);
    return { source: "pip", cmd: steps.join(" && ") };
  }
  if (project !== undefined) return { source: "pip", cmd: `${venv} && ${project}` };
  return undefined;
}

/** `requirements.txt`, `requirements-dev.txt`, … at the worktree's root, in a stable order. */
function requirementFiles(worktree: string): string[] {
  let names: string[];
  try {
    names = readdirSync(worktree);
  } catch {
    return [];
  }
  return names.filter((name) => REQUIREMENTS.test(name) && isFile(join(worktree, name))).sort();
}

/**
 * Whether pip can install the worktree: a `setup.py`, or a `pyproject.toml` that declares a
 * project or a build system (one that only configures tools, like black's, installs nothing).
 */
function isInstallable(worktree: string): boolean {
  if (isFile(join(worktree, "setup.py"))) return true;
  const text = pyproject(worktree);
  return text !== undefined && /^\s*\[(project|build-system|tool\.poetry)\]\s*$/m.test(text);
}

/** `[test]` when the project declares one of the usual test extras, else nothing. */
function extrasOf(worktree: string): string {
  const text = pyproject(worktree);
  if (text === undefined) return "";
  let inExtras = false;
  const found: string[] = [];
  for (const line of text.split("\n")) {
    const section = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    if (section) inExtras = section[1]?.trim() === "project.optional-dependencies";
    else if (inExtras) {
      const key = /^\s*"?([A-Za-z0-9_.-]+)"?\s*=/.exec(line)?.[1];
      if (key !== undefined && TEST_EXTRAS.includes(key)) found.push(key);
    }
  }
  return found.length > 0 ? `[${found.join(",")}]` : "";
}

function pyproject(worktree: string): string | undefined {
  try {
    // Bounded: the worktree is the agents' to write before a re-provisioning (a FIFO must not block here).
    return readBoundedTextSync(join(worktree, "pyproject.toml"), { maxBytes: MAX_PYPROJECT_BYTES });
  } catch {
    return undefined;
  }
}

/** Single-quotes a word for `/bin/sh` unless it is plainly safe. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./,=+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
