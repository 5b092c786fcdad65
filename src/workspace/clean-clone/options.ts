/** The options of a clean-clone check, and their check before anything runs, naming the bad field. */
import type { UserGitSettings } from "./user-config.js";
import type { EnvSpec } from "../../exec/index.js";
import type { Sandbox } from "../../sandbox/index.js";
import type { ProvisionConfig } from "../provision/index.js";
import { CleanCloneOptionsError } from "./errors.js";
import { validateLinkName } from "./links.js";

/** What a clean-clone check is asked to do. */
export interface CleanCloneOptions {
  /** The target repository (any folder inside its working tree); the suite runs at its counterpart. */
  repo: string;
  /** The suite, a user-written shell command run through `/bin/sh -c`. */
  command: string;
  /** Ignored dependency roots linked from the target; defaults per ecosystem. */
  links?: readonly string[];
  /** Path (or bare name looked up on PATH) of the runtime to target; its folder goes first on PATH. */
  interpreter?: string;
  /**
   * The operator named the interpreter (the CLI's `--interpreter`), so its installation is made
   * readable to the suite. One the repository names (`clean_clone.interpreter`) is not: it must
   * already be visible in the sandbox (system folders, `HARNESS_SANDBOX_READ`, the clone), or a
   * repository could show its suite any folder of the host (`/home/app/.ssh/bin/x` → `/home/app`).
   */
  interpreterFromOperator?: boolean;
  timeoutMs?: number;
  /** The suite's full output is appended here. */
  logPath?: string;
  /** What the suite receives beyond the exec allowlist (never the App's credentials). `CI=true` is set unless this sets CI. */
  env?: EnvSpec;
  /** Where the scratch folder is made; the OS temp folder by default. */
  scratchRoot?: string;
  /** Only the last `depth` commits of history in the clone (CI's shallow checkout gives 1). */
  depth?: number;
  /** Let symlinks pointing outside the repository through (they dangle in any other checkout). */
  allowExternalSymlinks?: boolean;
  /** Where the suite runs: the operator's sandbox, resolved once at the edge (app.ts, cli/). */
  sandbox: Sandbox;
  /** The suite gets the network (`test.network`); off by default. */
  network?: boolean;
  /** Provision the clone afresh (with the warm package caches) instead of linking dependency folders. */
  provision?: { config?: ProvisionConfig; harnessHome?: string };
  /**
   * How the clone is provisioned when it must be without `provision` being asked: a workspaces
   * repository whose dependency roots are not named in `links` (its workspace links would lead
   * back into the working tree). The repository's provisioning configuration; the ladder's
   * defaults when absent.
   */
  provisionWorkspaces?: { config?: ProvisionConfig; harnessHome?: string };
  /** The user's global ignore file and line endings, for the commit their `git add -A` would make (the CLI's user). */
  userGit?: UserGitSettings;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function positive(field: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0)) throw new CleanCloneOptionsError(field, String(value), "must be a positive integer");
}

/** Throws {@link CleanCloneOptionsError} naming the first malformed option. */
export function checkOptions(options: CleanCloneOptions): void {
  if (options.command.trim() === "") throw new CleanCloneOptionsError("command", options.command, "must not be empty");
  options.links?.forEach((name, index) => validateLinkName(name, `links[${index}]`));
  positive("timeoutMs", options.timeoutMs);
  positive("depth", options.depth);
  if (options.interpreter !== undefined && options.interpreter.trim() === "")
    throw new CleanCloneOptionsError("interpreter", options.interpreter, "must not be empty");
  options.env?.allow?.forEach((name, index) => {
    if (!ENV_NAME.test(name)) throw new CleanCloneOptionsError(`env.allow[${index}]`, name, "must be an environment variable name");
  });
}
