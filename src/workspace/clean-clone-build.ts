/**
 * Construction of a clean clone: a fresh clone of the target with the target's uncommitted
 * change committed into it, so the suite can run where the change will really exist. The
 * target is only read; every git call is hardened (see git.ts) and every failure becomes a
 * {@link CleanCloneBuildError} naming its step.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { keepLastBytes } from "../exec/index.js";
import { copyUntracked, splitNulBytes } from "./clean-clone-copy.js";
import { CleanCloneBuildError, type CleanCloneBuildStep } from "./clean-clone-errors.js";
import { DEFAULT_CLEAN_CLONE_LINKS, linkDependencyRoots } from "./clean-clone-links.js";
import { DIFF_HARDENING, git, gitBytes, gitResult, HARNESS_IDENTITY } from "./git.js";

/** Longest any one git step of the construction may take. */
export const CLEAN_CLONE_STEP_TIMEOUT_MS = 600_000;

export interface BuildCleanCloneOptions {
  /** The target: any folder inside its working tree (a linked worktree too). */
  repo: string;
  /** An existing, empty folder the caller owns and removes; the clone goes in `<scratchDir>/clone`. */
  scratchDir: string;
  /** Dependency roots to link from the target; {@link DEFAULT_CLEAN_CLONE_LINKS} when absent. */
  links?: readonly string[];
}

export interface BuiltCleanClone {
  /** Root of the clone's working tree. */
  cloneDir: string;
  /** Where the suite runs: the clone's counterpart of `repo` (it may be a subfolder). */
  workDir: string;
  /** The commit made in the clone, holding the target's working tree. */
  commit: string;
  /** The target's HEAD the change sits on. */
  base: string;
  /** Dependency roots linked into the clone. */
  linked: string[];
  /** Untracked files (or nested repositories) copied. */
  untracked: number;
}

/** Runs one step; a git or file-system failure becomes a build error naming the step. */
async function step<T>(name: CleanCloneBuildStep, repo: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof CleanCloneBuildError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new CleanCloneBuildError(name, repo, keepLastBytes(message, 4096));
  }
}

const read = (cwd: string) => ({ cwd, readOnly: true, timeoutMs: CLEAN_CLONE_STEP_TIMEOUT_MS });
const write = (cwd: string) => ({ cwd, timeoutMs: CLEAN_CLONE_STEP_TIMEOUT_MS });

/** The target's top folder, the prefix of `repo` inside it, and its HEAD commit. */
async function resolveTarget(repo: string): Promise<{ top: string; prefix: string; base: string }> {
  const exists = await stat(repo).then((info) => info.isDirectory(), () => false);
  if (!exists) throw new CleanCloneBuildError("resolve", repo, "is not a directory");
  const located = await gitResult(["rev-parse", "--show-toplevel", "--show-prefix"], read(repo));
  if (located.exitCode !== 0) throw new CleanCloneBuildError("resolve", repo, `is not inside a git working tree (${located.tail.trim()})`);
  const [top = "", prefix = ""] = (located.stdout ?? Buffer.alloc(0)).toString("utf8").split("\n");
  const head = await gitResult(["rev-parse", "-q", "--verify", "HEAD^{commit}"], read(top));
  if (head.exitCode !== 0) throw new CleanCloneBuildError("resolve", repo, "has no commit to clone (HEAD is unborn)");
  return { top, prefix, base: (head.stdout ?? Buffer.alloc(0)).toString("utf8").trim() };
}

/** Diff options that make a patch `git apply` takes, whatever the user's config says. */
const PATCH_FLAGS: readonly string[] = [
  ...DIFF_HARDENING,
  "--binary",
  "--no-renames",
  "--submodule=short",
  // A dirty submodule checkout is not a change of the superproject; only its pointer is.
  "--ignore-submodules=dirty",
  "--src-prefix=a/",
  "--dst-prefix=b/",
  "--no-relative",
];

const GITLINK_HEADER = /^diff --git (.*)\n(?:(?!diff --git ).*\n)*?(?:index [0-9a-f]+\.\.[0-9a-f]+ 160000|(?:new file|deleted file|old|new) mode 160000)$/m;

/**
 * `git apply` without an index silently skips a submodule pointer change, which would leave
 * the clone's tree different from the target's; the clone has no submodule checkouts to carry
 * it, so such a change is refused instead of dropped.
 */
function refuseGitlinkChanges(patch: Buffer, repo: string): void {
  if (patch.indexOf(" 160000") === -1) return;
  const match = GITLINK_HEADER.exec(patch.toString("latin1"));
  if (match) {
    const where = Buffer.from(match[1] ?? "", "latin1").toString("utf8");
    throw new CleanCloneBuildError("apply", repo, `the change moves a submodule pointer (${where}); a clean clone has no submodule checkout to carry it`);
  }
}

/**
 * Builds the clean clone of `options.repo` in `options.scratchDir`: clone `--no-hardlinks`
 * from the file-system path, apply the `git diff --binary HEAD` patch, copy untracked files
 * that are not ignored, link dependency roots (excluded in the clone), then `git add -A` and
 * commit with {@link HARNESS_IDENTITY}. Throws {@link CleanCloneBuildError} naming the step;
 * never writes to the target. The caller owns (and removes) `scratchDir`.
 */
export async function buildCleanClone(options: BuildCleanCloneOptions): Promise<BuiltCleanClone> {
  const { repo, scratchDir } = options;
  const { top, prefix, base } = await step("resolve", repo, () => resolveTarget(repo));
  const patchPath = join(scratchDir, "change.patch");
  const cloneDir = join(scratchDir, "clone");

  // The target is read before the clone exists, so a scratch folder inside it is still empty.
  const untracked = await step("diff", repo, async () =>
    splitNulBytes(await gitBytes(["ls-files", "--others", "--exclude-standard", "-z"], read(top))),
  );
  const patch = await step("diff", repo, async () => {
    // Plumbing on purpose: porcelain `git diff` rewrites a stat-dirty index even with
    // GIT_OPTIONAL_LOCKS=0, and `diff-index -p HEAD` is the same patch as `git diff HEAD`.
    await git(["diff-index", "-p", ...PATCH_FLAGS, `--output=${patchPath}`, "HEAD", "--"], read(top));
    return readFile(patchPath);
  });
  refuseGitlinkChanges(patch, repo);

  await step("clone", repo, async () => {
    await git(["clone", "--no-hardlinks", "-q", "--", top, cloneDir], read(scratchDir));
    // A clone checks out the source's HEAD, detached or not; make sure it is the same commit.
    if ((await git(["rev-parse", "HEAD"], read(cloneDir))) !== base) {
      await git(["checkout", "-q", "--detach", base], write(cloneDir));
    }
  });
  if (patch.length > 0) {
    await step("apply", repo, () =>
      git(["-c", "apply.whitespace=nowarn", "-c", "apply.ignoreWhitespace=no", "apply", "--whitespace=nowarn", patchPath], write(cloneDir)),
    );
  }
  await copyUntracked(top, cloneDir, untracked, repo);
  const linked = await linkDependencyRoots(top, cloneDir, options.links ?? DEFAULT_CLEAN_CLONE_LINKS, repo);

  const commit = await step("commit", repo, async () => {
    await git(["add", "-A"], write(cloneDir));
    const message = `clean-clone check: the target's working tree on ${base}`;
    await git(["-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "--no-verify", "-m", message], { ...write(cloneDir), env: HARNESS_IDENTITY });
    return git(["rev-parse", "HEAD"], read(cloneDir));
  });
  const workDir = prefix === "" ? cloneDir : join(cloneDir, prefix);
  return { cloneDir, workDir, commit, base, linked, untracked: untracked.length };
}
