/**
 * The clean-clone check: re-runs the suite in a fresh checkout of the commit the user's own
 * `git add -A && git commit` would make, because a suite that passes in a dirty working tree
 * can fail once the change is committed and checked out elsewhere (a `git show HEAD:` baseline,
 * a `git status` assertion, a file `.gitignore` keeps out, CRLF or a mode the commit does not
 * record). Whatever happens, the scratch folder is removed and a result comes back; a clone
 * that cannot be built and an interpreter that cannot run are "did not run", never "failed" and
 * never an exception. A suite that runs out of time did run: it failed, without an exit code.
 */
import { realpathSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { isInside } from "../../sandbox/index.js";
import { provisionWorktree, type ProvisionOutcome } from "../provision/index.js";
import { WorkspaceProvisionError, type ProvisionConfig } from "../provision/index.js";
import { workspacesWarning } from "./workspaces.js";
import { buildCleanClone, type BuiltCleanClone } from "./build.js";
import { CleanCloneBuildError } from "./errors.js";
import { interpreterVersion, InterpreterError, resolveInterpreter } from "./interpreter.js";
import { checkOptions, type CleanCloneOptions } from "./options.js";
import { ordered, type CleanCloneResult } from "./record.js";
import { makeScratch, removeScratch } from "./scratch.js";
import { cloneStep, runSuite, suiteEnvSet } from "./run-suite.js";
import { launchInClone } from "./suite.js";
import { describeInvoked } from "./truth.js";
import { importWarnings } from "./imports.js";

export type { CleanCloneResult } from "./record.js";
export type { CleanCloneOptions } from "./options.js";

/** Time the suite gets when the caller names none. */
export const DEFAULT_CLEAN_CLONE_TIMEOUT_MS = 600_000;

/** Installs the clone's dependencies with the provisioning ladder; a failure is "did not run". */
async function provisionClone(
  options: CleanCloneOptions,
  asked: { config?: ProvisionConfig; harnessHome?: string },
  cloneDir: string,
  scratch: string,
): Promise<ProvisionOutcome> {
  try {
    return await provisionWorktree({
      worktree: cloneDir,
      taskId: "clean-clone",
      // A fresh install is the point of `clean_clone.provision`; a scratch clone's snapshot would only be garbage.
      snapshots: false,
      logPath: options.logPath ?? join(scratch, "provision.log"),
      // Stryker disable next-line ConditionalExpression: a config of undefined is no config
      ...(asked.config !== undefined ? { config: asked.config } : {}),
      ...(asked.harnessHome !== undefined ? { harnessHome: asked.harnessHome } : {}),
      sandbox: options.sandbox,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new CleanCloneBuildError("provision", options.repo, error instanceof WorkspaceProvisionError ? message : `internal error: ${message}`);
  }
}

/** Why a provisioned clone holds nothing installed, for its warnings. */
function nothingInstalled(outcome: ProvisionOutcome): string {
  if (outcome.source === "cargo") return "provisioning installed nothing: Cargo fetches a crate's dependencies when the suite builds it";
  return "provisioning installed nothing: the ladder knows no lockfile or manifest of this repository; set provision.command to install its dependencies";
}

/** A relative path (`.venv/bin/python`), which names a file of the clone; not a bare name, not absolute. */
function isRelativePath(interpreter: string): boolean {
  return interpreter.includes("/") && !isAbsolute(interpreter);
}

function searchPathOf(options: CleanCloneOptions): string | undefined {
  return options.env?.set?.PATH ?? process.env.PATH;
}

/**
 * Resolves the targeted interpreter inside the clone and asks its version in the sandbox, as a
 * step of the clean clone: the repository names it, so the App never starts it itself.
 */
async function targetInterpreter(
  options: CleanCloneOptions,
  clone: BuiltCleanClone,
  result: Partial<CleanCloneResult>,
  early: string | undefined,
): Promise<string> {
  const asked = options.interpreter ?? "";
  const interpreter = early ?? (await resolveInterpreter(asked, clone.workDir, searchPathOf(options), clone.cloneDir));
  if (early !== undefined && options.interpreterFromOperator !== true && !isInside(realpathSync(early), clone.cloneDir)) {
    // The repository named a program outside its clone: the sandbox shows it only if the operator already shows it to every step.
    if (!options.sandbox.sees(realpathSync(early))) {
      throw new InterpreterError(
        asked,
        "is not visible in the sandbox: clean_clone.interpreter names a program outside the system folders; an operator who trusts its installation adds that folder to HARNESS_SANDBOX_READ",
      );
    }
  }
  // A path inside the clone is named as the repository names it: the clone is gone afterwards.
  result.interpreter = early ?? relative(clone.workDir, interpreter);
  result.interpreterVersion = await interpreterVersion(interpreter, (argv, bounds) =>
    launchInClone(
      argv,
      { cwd: clone.workDir, env: { allow: options.env?.allow ?? [], set: suiteEnvSet(options, interpreter, clone.cloneDir) }, ...bounds },
      cloneStep(options, clone, interpreter),
    ),
  );
  return interpreter;
}

/**
 * Runs the clean-clone check. Rejects only for malformed options
 * (`CleanCloneOptionsError`) or a scratch folder that cannot be made or removed; a build
 * failure (a refusal included) or an unusable interpreter resolve as `ran: false` with a
 * `reason`; a timeout as `ran: true, timedOut: true` with no exit code. The scratch folder is
 * removed in every case.
 */
export async function runCleanCloneCheck(options: CleanCloneOptions): Promise<CleanCloneResult> {
  checkOptions(options);
  const started = performance.now();
  const scratch = await makeScratch(options.scratchRoot);
  // Stryker disable next-line ConditionalExpression: a depth of undefined is dropped from the result
  const result: Partial<CleanCloneResult> = options.depth !== undefined ? { depth: options.depth } : {};
  try {
    // Recorded as asked first, so a result about an unusable interpreter still names it.
    if (options.interpreter !== undefined) result.interpreter = options.interpreter;
    // A name on PATH or an absolute path can be found before the clone is built (a missing one costs no clone).
    const early =
      options.interpreter !== undefined && !isRelativePath(options.interpreter)
        ? await resolveInterpreter(options.interpreter, scratch, searchPathOf(options))
        : undefined;
    if (early !== undefined) result.interpreter = early;
    const clone = await buildCleanClone({
      repo: options.repo,
      scratchDir: scratch,
      // Stryker disable next-line ArrayDeclaration: a name the target does not have links nothing
      ...(options.provision !== undefined ? { links: [] } : options.links ? { links: options.links } : {}),
      ...(options.depth !== undefined ? { depth: options.depth } : {}),
      ...(options.allowExternalSymlinks === true ? { allowExternalSymlinks: true } : {}),
      ...(options.userGit !== undefined ? { userGit: options.userGit } : {}),
      // Links the caller named are kept; the default ones would lead a workspaces repository back into its working tree.
      ...(options.provision === undefined && options.links === undefined ? { provisionWorkspaces: true } : {}),
    });
    result.linked = clone.linked;
    result.warnings = [...clone.warnings];
    const provision = options.provision ?? (clone.workspaces !== undefined ? (options.provisionWorkspaces ?? {}) : undefined);
    if (clone.workspaces !== undefined) result.warnings.push(workspacesWarning(clone.workspaces));
    if (provision !== undefined) {
      const outcome = await provisionClone(options, provision, clone.cloneDir, scratch);
      // Provisioned means something was installed: a no-op rung links nothing and installs nothing.
      result.provisioned = outcome.receipt.cmd !== null;
      if (!result.provisioned) result.warnings.push(nothingInstalled(outcome));
      if (outcome.note !== undefined) result.warnings.push(outcome.note);
    }
    // Only now: a relative interpreter is a file of the clone (provisioning may have made it).
    const interpreter = options.interpreter === undefined ? undefined : await targetInterpreter(options, clone, result, early);
    Object.assign(result, await describeInvoked(options, clone, interpreter, result));
    result.warnings = [...(result.warnings ?? []), ...(await importWarnings(options, clone, interpreter, result))];
    Object.assign(result, await runSuite(options, clone, interpreter, DEFAULT_CLEAN_CLONE_TIMEOUT_MS));
  } catch (error) {
    // The pipeline must always get a verdict to record, so even a fault of the harness itself
    // comes back as "did not run", labelled as such.
    const known = error instanceof CleanCloneBuildError || error instanceof InterpreterError;
    const message = error instanceof Error ? error.message : String(error);
    Object.assign(result, { ran: false, reason: known ? message : `internal error: ${message}` });
  } finally {
    await removeScratch(scratch);
  }
  return ordered(options.command, result, Math.round(performance.now() - started));
}
