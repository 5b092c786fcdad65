/** The cache's local story branch before a run: moved to the remote's tip only when it is elsewhere, or needed and absent. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { prepareStoryBranch } from "../../src/runner/story-branch.js";
import { git, gitResult, HARNESS_IDENTITY } from "../../src/workspace/index.js";
import { initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

const BRANCH = "harness/story-7";

/** A bare cache whose remote story branch is one commit on main; returns it and both commits. */
async function cache(): Promise<{ dir: string; main: string; remoteTip: string }> {
  const source = join(makeTempDir("harness-story-branch-"), "source");
  await initRepo(source, { "a.txt": "a\n" });
  const dir = join(makeTempDir("harness-story-branch-"), "cache.git");
  await git(["clone", "-q", "--bare", source, dir], { cwd: makeTempDir() });
  const main = await git(["rev-parse", "HEAD"], { cwd: dir });
  const remoteTip = await git(["commit-tree", `${main}^{tree}`, "-p", main, "-m", "start"], { cwd: dir, env: HARNESS_IDENTITY });
  await git(["update-ref", `refs/remotes/origin/${BRANCH}`, remoteTip], { cwd: dir });
  return { dir, main, remoteTip };
}

const local = async (dir: string): Promise<string | undefined> => {
  const result = await gitResult(["rev-parse", "--verify", "--quiet", `refs/heads/${BRANCH}`], { cwd: dir });
  return result.exitCode === 0 ? result.stdout?.toString().trim() : undefined;
};

describe("prepareStoryBranch", () => {
  it("moves a branch that is elsewhere to the remote's tip, and removes the worktrees a killed run left on it", async () => {
    const { dir, main, remoteTip } = await cache();
    await git(["branch", BRANCH, main], { cwd: dir });
    const stale = join(makeTempDir("harness-story-branch-"), "stale");
    await git(["worktree", "add", "-q", stale, BRANCH], { cwd: dir });
    await prepareStoryBranch({ repoDir: dir, branch: BRANCH, remoteTip, localTip: main, absentIsFine: true });
    expect(await local(dir)).toBe(remoteTip);
    expect(existsSync(stale)).toBe(false);
  });

  it("creates an absent branch at the remote's tip when the run needs it (a re-admission merges into it)", async () => {
    const { dir, remoteTip } = await cache();
    await prepareStoryBranch({ repoDir: dir, branch: BRANCH, remoteTip, localTip: undefined, absentIsFine: false });
    expect(await local(dir)).toBe(remoteTip);
  });

  it("leaves an absent branch absent when the run makes it from the remote's, and one already at the tip as it is", async () => {
    const { dir, remoteTip } = await cache();
    await prepareStoryBranch({ repoDir: dir, branch: BRANCH, remoteTip, localTip: undefined, absentIsFine: true });
    expect(await local(dir)).toBeUndefined();
    await git(["branch", BRANCH, remoteTip], { cwd: dir });
    // Told it is at the tip, it is not touched: a branch moved meanwhile (it cannot be, in a job) would stay where it went.
    const elsewhere = await git(["commit-tree", `${remoteTip}^{tree}`, "-p", remoteTip, "-m", "moved"], { cwd: dir, env: HARNESS_IDENTITY });
    await git(["update-ref", `refs/heads/${BRANCH}`, elsewhere], { cwd: dir });
    await prepareStoryBranch({ repoDir: dir, branch: BRANCH, remoteTip, localTip: remoteTip, absentIsFine: true });
    expect(await local(dir)).toBe(elsewhere);
  });
});
