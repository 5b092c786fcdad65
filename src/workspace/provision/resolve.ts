/** The provisioning command ladder: the first rung that matches a worktree decides. */
import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";
import { validateProvisionConfig, type ProvisionConfig } from "./config.js";
import { pythonRung, type PythonSource } from "./python.js";

/** Which rung of the ladder chose the command. */
export type ProvisionSource = "config" | "hook" | "pnpm" | "npm" | "yarn" | PythonSource | "cargo" | "none";

/**
 * The command a worktree provisions with; `cmd` and `argv` are null for the no-op rungs. A
 * `note` says what a reader should know (a lock whose tool is missing, installed with pip instead).
 */
export type ResolvedProvision =
  { source: Exclude<ProvisionSource, "cargo" | "none">; cmd: string; argv: string[]; note?: string } | { source: "cargo" | "none"; cmd: null; argv: null };

/** The repository hook, relative to the worktree root. */
export const PROVISION_HOOK = ".harness/provision.sh";

/** Lockfile rungs in order, with the exact argv each one runs. */
const LOCKFILE_RUNGS: ReadonlyArray<{ file: string; source: "pnpm" | "npm" | "yarn"; argv: string[] }> = [
  { file: "pnpm-lock.yaml", source: "pnpm", argv: ["pnpm", "install", "--frozen-lockfile", "--prefer-offline"] },
  { file: "package-lock.json", source: "npm", argv: ["npm", "ci"] },
  { file: "yarn.lock", source: "yarn", argv: ["yarn", "install", "--frozen-lockfile"] },
];

/**
 * Resolves how `worktree` is provisioned, stopping at the first rung: a configured command
 * (`/bin/sh -lc`), an executable `.harness/provision.sh`, `pnpm-lock.yaml`,
 * `package-lock.json`, `yarn.lock`, the Python rungs (`uv.lock`, `poetry.lock`,
 * `requirements*.txt`, `pyproject.toml` or `setup.py`: a `.venv` in the worktree with the
 * project installed into it), `Cargo.toml` (no-op), none (no-op). `searchPath` (the
 * provisioning PATH, the App's by default) decides whether uv or poetry is there to honour its
 * lock. Throws `ProvisionConfigError` for an unusable configured command.
 */
export function resolveProvisionCommand(args: { worktree: string; config?: ProvisionConfig; searchPath?: string }): ResolvedProvision {
  const { command } = validateProvisionConfig(args.config);
  if (command !== undefined) return { source: "config", cmd: command, argv: ["/bin/sh", "-lc", command] };

  const hook = join(args.worktree, PROVISION_HOOK);
  if (isExecutableFile(hook)) return { source: "hook", cmd: hook, argv: [hook] };

  for (const rung of LOCKFILE_RUNGS) {
    if (isFile(join(args.worktree, rung.file))) return { source: rung.source, cmd: rung.argv.join(" "), argv: [...rung.argv] };
  }
  const python = pythonRung(args.worktree, args.searchPath ?? process.env.PATH ?? "");
  if (python !== undefined) {
    const argv = ["/bin/sh", "-c", python.cmd];
    return python.note !== undefined ? { source: python.source, cmd: python.cmd, argv, note: python.note } : { source: python.source, cmd: python.cmd, argv };
  }
  if (isFile(join(args.worktree, "Cargo.toml"))) return { source: "cargo", cmd: null, argv: null };
  return { source: "none", cmd: null, argv: null };
}

function isFile(path: string): boolean {
  // On one line so the mark reaches the catch (the try's own block is pinned by the ladder's tests).
  // Stryker disable next-line BlockStatement: an empty catch answers undefined, which every caller reads as false
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A hook without the executable bit is ignored on purpose: the repository did not opt in. */
function isExecutableFile(path: string): boolean {
  if (!isFile(path)) return false;
  // On one line so the mark reaches the catch (the try's own block is pinned by the hook tests).
  // Stryker disable next-line BlockStatement: an empty catch answers undefined, which every caller reads as false
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
