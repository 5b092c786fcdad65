/**
 * Construction of a clean clone: a fresh clone of the target without a checkout (clone.ts; it
 * starts while the target is located, target.ts), the commit the user's `git add -A && git
 * commit` would make, built into that clone's objects (commit.ts), checked for what cannot
 * survive a checkout elsewhere (refuse.ts) while git checks it out with the target's history
 * behind it, then dependency folders linked in (links.ts). The target is only read; every git call
 * is hardened (see git.ts) and every failure becomes a {@link CleanCloneBuildError} naming its step.
 */
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { checkOutCommit, cloneTarget } from "./clone.js";
import { buildUserCommit, scratchGitEnv } from "./commit.js";
import { CLEAN_CLONE_DETAIL_BYTES, CleanCloneBuildError, type CleanCloneBuildStep } from "./errors.js";
import { DEFAULT_CLEAN_CLONE_LINKS, linkDependencyRoots } from "./links.js";
import { describeRefusals, refusals } from "./refuse.js";
import { resolveTarget } from "./target.js";
import { declaredWorkspaces } from "./workspaces.js";
import type { UserGitSettings } from "./user-config.js";

export interface BuildCleanCloneOptions {
  /** The target: any folder inside its working tree (a linked worktree too). */
  repo: string;
  /** An existing, empty folder the caller owns and removes; the clone goes in `<scratchDir>/clone`. */
  scratchDir: string;
  /** Dependency roots to link from the target; {@link DEFAULT_CLEAN_CLONE_LINKS} when absent. `[]` links none. */
  links?: readonly string[];
  /** Only the last `depth` commits of history in the clone, as CI's shallow checkout gives. */
  depth?: number;
  /** Let symlinks pointing outside the repository through (they dangle in any other checkout). */
  allowExternalSymlinks?: boolean;
  /** The user's global ignore file and line endings (the CLI's user; the App has none). */
  userGit?: UserGitSettings;
  /** Link nothing when the commit declares workspaces (the caller provisions the clone instead, see workspaces.ts). */
  provisionWorkspaces?: boolean;
}

export interface BuiltCleanClone {
  /** Root of the clone's working tree. */
  cloneDir: string;
  /** Where the suite runs: the clone's counterpart of `repo` (it may be a subfolder). */
  workDir: string;
  /** The check's commit: the target's working tree as `git add -A && git commit` would record it. */
  commit: string;
  /** Its tree id. */
  tree: string;
  /** The target's HEAD the change sits on (the commit's parent). */
  base: string;
  /** Root of the target's working tree (linked folders point into it). */
  targetTop: string;
  /** Dependency roots linked into the clone. */
  linked: string[];
  /** What was let through but will not resolve elsewhere (an allowed external symlink). */
  warnings: string[];
  /** What declares the commit's workspaces, when `provisionWorkspaces` was asked and it has some: nothing was linked. */
  workspaces?: string;
}

/** Runs one step; a git or file-system failure becomes a build error naming the step. */
async function step<T>(name: CleanCloneBuildStep, repo: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof CleanCloneBuildError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new CleanCloneBuildError(name, repo, message);
  }
}

/**
 * Builds the clean clone of `options.repo` in `options.scratchDir`. Throws
 * {@link CleanCloneBuildError} naming the step (`refuse` lists every path that cannot survive
 * the trip); never writes to the target. The caller owns (and removes) `scratchDir`.
 */
export async function buildCleanClone(options: BuildCleanCloneOptions): Promise<BuiltCleanClone> {
  const { repo, scratchDir } = options;
  const cloneDir = join(scratchDir, "clone");
  // With a depth, the full clone only supplies objects and history to the shallow one.
  const historyDir = options.depth !== undefined ? join(scratchDir, "history") : cloneDir;
  // The clone needs only the repository's top, which `repo` usually is: it starts beside the
  // resolve instead of after it, and is kept only when the resolve says `repo` is the top.
  const [located, early] = await Promise.allSettled([
    // Stryker disable next-line StringLiteral: resolveTarget throws only build errors, which name their own step
    step("resolve", repo, () => resolveTarget(repo)),
    cloneTarget({ top: resolve(repo) }, historyDir),
  ]);
  if (located.status === "rejected") throw located.reason;
  const target = located.value;
  let cloned: () => Promise<{ objectsDir: string }> = () =>
    early.status === "fulfilled" ? Promise.resolve(early.value) : Promise.reject(early.reason as Error);
  // Stryker disable next-line ConditionalExpression: cloning again when `repo` is the top gives the same clone, only later
  if (target.top !== resolve(repo)) {
    // A subfolder, or another spelling of the top (a symlink): an early clone that worked is of that spelling, so it goes.
    if (early.status === "fulfilled") await rm(historyDir, { recursive: true });
    cloned = () => cloneTarget(target, historyDir);
  }
  const { objectsDir } = await step("clone", repo, cloned);
  const scratch = { indexFile: join(scratchDir, "index"), objectsDir };

  const { tree, commit } = await step("commit", repo, () => buildUserCommit(target, scratch, scratchDir, options.userGit));
  // The refusals only read the commit, so they are looked for while git checks it out; a refusal
  // still wins over a checkout that failed, and nothing is linked into a refused clone.
  const [refusal, checkout] = await Promise.allSettled([
    step("refuse", repo, () =>
      refusals(target.base, tree, target.top, scratchGitEnv(scratch), options.allowExternalSymlinks === true ? { allowExternalSymlinks: true } : {}),
    ),
    // Stryker disable next-line ConditionalExpression: a depth of undefined is no depth to checkOutCommit
    step("clone", repo, () => checkOutCommit({ target, historyDir, commit, cloneDir, ...(options.depth !== undefined ? { depth: options.depth } : {}) })),
  ]);
  if (refusal.status === "rejected") throw refusal.reason;
  const { refused, warnings } = refusal.value;
  if (refused.length > 0) throw new CleanCloneBuildError("refuse", repo, describeRefusals(refused, CLEAN_CLONE_DETAIL_BYTES), tree);
  if (checkout.status === "rejected") throw checkout.reason;
  const workspaces = options.provisionWorkspaces === true ? await step("link", repo, () => declaredWorkspaces(cloneDir)) : undefined;
  const links = workspaces !== undefined ? [] : (options.links ?? DEFAULT_CLEAN_CLONE_LINKS);
  const { linked, notCompared } = await linkDependencyRoots(target.top, cloneDir, links, repo);
  warnings.push(...notCompared.map((line) => `linked without comparing it with the lockfile: ${line}`));
  const workDir = join(cloneDir, target.prefix);
  return { cloneDir, workDir, commit, tree, base: target.base, targetTop: target.top, linked, warnings, ...(workspaces !== undefined ? { workspaces } : {}) };
}
