/**
 * The target of a clean-clone check, located once: where its working tree and index are, the commit the change sits on, and the branch (if any) HEAD names. Every call only
 * reads (`GIT_OPTIONAL_LOCKS=0`).
 */
import { stat } from "node:fs/promises";
import { gitResult } from "../git.js";
import { CleanCloneBuildError } from "./errors.js";
import { CLEAN_CLONE_STEP_TIMEOUT_MS } from "./limits.js";

export interface CleanCloneTarget {
  /** Root of the target's working tree. */
  top: string;
  /** The caller's folder relative to `top` (`""` or ending in `/`). */
  prefix: string;
  /** The target's HEAD commit: the parent of the check's commit. */
  base: string;
  /** The branch HEAD names (`main`), absent when HEAD is detached. */
  branch?: string;
  /** The target's index file (a linked worktree has its own). */
  indexFile: string;
}

// Stryker disable next-line BooleanLiteral: rev-parse takes no optional lock either way; readOnly says what the call promises
const read = (cwd: string) => ({ cwd, readOnly: true, timeoutMs: CLEAN_CLONE_STEP_TIMEOUT_MS });

function lines(result: { stdout?: Buffer }): string[] {
  return (result.stdout ?? Buffer.alloc(0)).toString("utf8").split("\n");
}

/** Why `repo` cannot be a target, asked step by step once the combined question failed. */
async function whyNot(repo: string): Promise<CleanCloneBuildError> {
  const located = await gitResult(["rev-parse", "--show-toplevel"], read(repo));
  // Stryker disable next-line MethodExpression: exec's tail has no trailing newline to trim; the trim is for the sentence's sake
  if (located.exitCode !== 0) return new CleanCloneBuildError("resolve", repo, `is not inside a git working tree (${located.tail.trim()})`);
  // Inside a working tree, the combined question fails for an unborn HEAD; no other cause is known, and a
  // broken question here (no arguments, an empty one) fails as well and still says "unborn".
  // Stryker disable next-line ArrayDeclaration,StringLiteral: see above
  const head = await gitResult(["rev-parse", "-q", "--verify", "HEAD^{commit}"], read(repo));
  // Stryker disable next-line ConditionalExpression: see above
  if (head.exitCode !== 0) return new CleanCloneBuildError("resolve", repo, "has no commit to clone (HEAD is unborn)");
  return new CleanCloneBuildError("resolve", repo, `could not be located: ${located.tail.trim()}`);
}

/** Locates the target of `repo` (any folder inside its working tree, a linked worktree too) in one git call. */
export async function resolveTarget(repo: string): Promise<CleanCloneTarget> {
  // Stryker disable next-line ArrowFunction: undefined is as false as false to the check below
  const exists = await stat(repo).then(
    (info) => info.isDirectory(),
    () => false,
  );
  if (!exists) throw new CleanCloneBuildError("resolve", repo, "is not a directory");
  const located = await gitResult(
    [
      "rev-parse",
      "--path-format=absolute",
      "--show-toplevel",
      "--git-path",
      "index",
      "--path-format=relative",
      "--show-prefix",
      "HEAD^{commit}",
      "--symbolic-full-name",
      "HEAD",
    ],
    read(repo),
  );
  if (located.exitCode !== 0) throw await whyNot(repo);
  const [top = "", indexFile = "", prefix = "", base = "", symbolic = ""] = lines(located);
  // A detached HEAD prints "HEAD", shorter than the prefix, so it slices to "" whichever test admits it.
  // Stryker disable next-line StringLiteral: see above
  const branch = symbolic.startsWith("refs/heads/") ? symbolic.slice("refs/heads/".length) : "";
  return { top, prefix, base, indexFile, ...(branch !== "" ? { branch } : {}) };
}
