/**
 * The attack: the default branch records a gitlink `sub`; an agent fills `sub/.git` with a
 * repository of the recorded commit whose config defines `filter.pwn.clean` and whose
 * `.gitattributes` says `* filter=pwn`, then touches a file in it. Any git command of the App
 * that asks the nested repository for its status runs the filter as the App's user. Each door
 * (every App git command that reads a task worktree) must leave the marker unwritten; a control
 * shows the same fixture does fire a plain `git add -A`, so the fixture is a real trap.
 */
import { cpSync, existsSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { changedFiles } from "../../src/pipeline/merge.js";
import { commitWorktree } from "../../src/pipeline/commit.js";
import {
  createTaskWorktree,
  excludeReceipt,
  git,
  gitResult,
  HARNESS_IDENTITY,
  NO_SUBMODULE_STATUS,
  removeTaskWorktree,
  runCleanCloneCheck,
} from "../../src/workspace/index.js";
import { addWorktree, initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const sandbox = sandboxFromEnv();

afterAll(removeTempDirs);

interface Trap {
  repo: string;
  worktree: string;
  /** Written by the nested repository's filter whenever git runs it. */
  marker: string;
  /** The nested repository's recorded commit. */
  subCommit: string;
}

/** Fills `dir/sub` with a copy of `source` (the recorded commit), armed with a filter and attributes. */
function arm(source: string, dir: string, marker: string): void {
  const sub = join(dir, "sub");
  rmSync(sub, { recursive: true, force: true });
  cpSync(source, sub, { recursive: true });
  writeFileSync(join(sub, ".git", "config"), `[core]\n\trepositoryformatversion = 0\n[filter "pwn"]\n\tclean = touch '${marker}'; cat\n\tsmudge = cat\n`);
  writeFileSync(join(sub, ".gitattributes"), "* filter=pwn\n");
  // A newer mtime than the nested index records: a status must hash the file, through the filter.
  const later = Date.now() / 1000 + 100;
  utimesSync(join(sub, "f.txt"), later, later);
}

async function trap(): Promise<Trap> {
  const base = makeTempDir("gitlink-");
  const source = join(base, "sub-source");
  const subCommit = (await initRepo(source, { "f.txt": "nested\n" })) ?? "";
  const repo = join(base, "repo");
  await initRepo(repo, { "a.txt": "a\n" });
  // The gitlink as a default branch records it: a 160000 entry, no .gitmodules needed.
  await git(["update-index", "--add", "--cacheinfo", `160000,${subCommit},sub`], { cwd: repo });
  await git(["commit", "-q", "-m", "gitlink"], { cwd: repo, env: HARNESS_IDENTITY });
  const worktree = await addWorktree(repo, join(base, "wt"), "harness/story-1");
  await excludeReceipt(worktree);
  const marker = join(makeTempDir("marker-"), "filter-ran");
  arm(source, worktree, marker);
  writeFileSync(join(worktree, "a.txt"), "changed by the agent\n");
  return { repo, worktree, marker, subCommit };
}

describe("no App git command runs a nested repository's filter", () => {
  it("control: the fixture fires a plain `git add -A` (what the App ran before)", async () => {
    const { worktree, marker } = await trap();
    await git(["add", "-A"], { cwd: worktree });
    expect(existsSync(marker)).toBe(true);
  });

  it("door: the pipeline's commit stages and commits the work, leaves the gitlink, runs nothing", async () => {
    const { worktree, marker, subCommit } = await trap();
    const commit = await commitWorktree(worktree, "Story 1: x\n", { stage: true });
    expect(existsSync(marker)).toBe(false);
    expect(await git(["show", `${commit}:a.txt`], { cwd: worktree })).toBe("changed by the agent");
    expect(await git(["rev-parse", `${commit}:sub`], { cwd: worktree })).toBe(subCommit);
    // And the empty commit of a blocked story.
    await commitWorktree(worktree, "Blocked story 1: x\n", { stage: false });
    expect(existsSync(marker)).toBe(false);
  });

  it("door: the pipeline's commit still records a moved or removed gitlink, without a status inside it", async () => {
    const { worktree, marker, subCommit } = await trap();
    const sub = join(worktree, "sub");
    await git(["-c", "filter.pwn.clean=cat", "commit", "-q", "--allow-empty", "-m", "moved"], { cwd: sub, env: HARNESS_IDENTITY });
    const moved = await git(["rev-parse", "HEAD"], { cwd: sub });
    expect(moved).not.toBe(subCommit);
    const commit = await commitWorktree(worktree, "Story 1: x\n", { stage: true });
    expect(existsSync(marker)).toBe(false);
    expect(await git(["rev-parse", `${commit}:sub`], { cwd: worktree })).toBe(moved);
    rmSync(sub, { recursive: true, force: true });
    const removed = await commitWorktree(worktree, "Story 1: y\n", { stage: true });
    expect(await git(["ls-tree", "--name-only", removed], { cwd: worktree })).toBe("a.txt");
  });

  it("door: a nested repository the agent made from nothing is recorded as a gitlink, without a status inside it", async () => {
    const { worktree, marker } = await trap();
    const fresh = join(makeTempDir("fresh-"), "src");
    await initRepo(fresh, { "f.txt": "other\n" });
    arm(fresh, join(worktree, "new"), marker);
    const commit = await commitWorktree(worktree, "Story 1: x\n", { stage: true });
    expect(existsSync(marker)).toBe(false);
    expect((await git(["ls-tree", commit, "new/sub"], { cwd: worktree })).split(" ")[0]).toBe("160000");
  });

  it("door: the clean clone's commit (`add -A` on a copy of the index) and its checkout", async () => {
    const { worktree, marker } = await trap();
    const result = await runCleanCloneCheck({ sandbox, repo: worktree, command: "cat a.txt", links: [], scratchRoot: makeTempDir("cc-root-") });
    expect(existsSync(marker)).toBe(false);
    expect(result).toMatchObject({ ran: true, exitCode: 0, outputTail: "changed by the agent" });
  });

  it("doors: the changed files of a task, a porcelain status and diff with NO_SUBMODULE_STATUS", async () => {
    const { worktree, marker, repo } = await trap();
    const base = await git(["rev-parse", "HEAD"], { cwd: worktree });
    const commit = await commitWorktree(worktree, "Story 1: x\n", { stage: true });
    arm(join(repo, "..", "sub-source"), worktree, marker);
    expect(await changedFiles(worktree, base, commit)).toEqual(["a.txt"]);
    for (const args of [
      ["status", "--porcelain"],
      ["diff", "--stat"],
      ["diff", "HEAD"],
    ]) {
      const result = await gitResult([...NO_SUBMODULE_STATUS, ...args], { cwd: worktree, readOnly: true });
      expect(result.exitCode).toBe(0);
    }
    expect(existsSync(marker)).toBe(false);
  });

  it("doors: a task worktree added beside the armed one, and the armed one removed", async () => {
    const { repo, worktree, marker } = await trap();
    const harnessHome = makeTempDir("home-");
    const other = await createTaskWorktree({ repoDir: repo, harnessHome, storyId: "2", taskId: "t", branch: "harness/story-2", baseRef: "main" });
    await removeTaskWorktree(repo, worktree);
    expect(existsSync(worktree)).toBe(false);
    await removeTaskWorktree(repo, other.path);
    expect(existsSync(marker)).toBe(false);
  });
});
