/**
 * The worktree's virtual environment, first on PATH for every step that runs the project's code
 * (the suite, its baseline, the agents): a Python rung installs the project into `.venv`, and a
 * suite that found `python3` elsewhere would import an installed copy instead of the worktree's.
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { VENV_DIR } from "./python.js";

/**
 * The variables a step in `root` gets when `root/.venv` holds a Python environment: its `bin`
 * first on `basePath`, and `VIRTUAL_ENV` as `activate` sets it. Empty when there is none, so a
 * caller can spread it into an environment unconditionally.
 */
export function venvEnv(root: string, basePath: string): Record<string, string> {
  const venv = join(root, VENV_DIR);
  const bin = join(venv, "bin");
  if (!isExecutableFile(join(bin, "python"))) return {};
  return { PATH: basePath === "" ? bin : `${bin}${delimiter}${basePath}`, VIRTUAL_ENV: venv };
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
