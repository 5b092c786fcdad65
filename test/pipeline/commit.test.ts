import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitWorktree } from "../../src/pipeline/commit.js";
import { excludeReceipt, git, PROVISION_RECEIPT } from "../../src/workspace/index.js";
import { looseIn17, makeReachable, writeLooseObjectsIn17 } from "../support/loose-objects.js";
import { countProcesses } from "../support/processes.js";
import { addWorktree, initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

async function worktree(): Promise<{ repo: string; path: string }> {
  const repo = join(makeTempDir(), "repo");
  await initRepo(repo, { "a.txt": "a\n" });
  const path = await addWorktree(repo, join(makeTempDir(), "wt"), "harness/story-1");
  await excludeReceipt(path);
  return { repo, path };
}

describe("commitWorktree", () => {
  it("commits every change but the receipt with three git processes, and returns the branch's new tip", async () => {
    const { path } = await worktree();
    writeFileSync(join(path, "new.txt"), "new\n");
    writeFileSync(join(path, PROVISION_RECEIPT), "{}\n");
    const { result, programs } = await countProcesses(() => commitWorktree(path, "Story 1: x\n", { stage: true }));
    // Listing the gitlinks, adding, committing.
    expect(programs).toEqual(["git", "git", "git"]);
    expect(result).toBe(await git(["rev-parse", "refs/heads/harness/story-1"], { cwd: path }));
    expect((await git(["ls-tree", "--name-only", "HEAD"], { cwd: path })).split("\n")).toEqual(["a.txt", "new.txt"]);
    expect(await git(["log", "-1", "--format=%B%an"], { cwd: path })).toBe("Story 1: x\nstory-harness");
  });

  it("still unstages a receipt that was forced into the index, and commits without it", async () => {
    const { path } = await worktree();
    writeFileSync(join(path, PROVISION_RECEIPT), "{}\n");
    await git(["add", "-f", PROVISION_RECEIPT], { cwd: path });
    const { programs } = await countProcesses(() => commitWorktree(path, "Story 1: x\n", { stage: true }));
    expect(programs).toHaveLength(4);
    expect(await git(["ls-tree", "--name-only", "HEAD"], { cwd: path })).toBe("a.txt");
  });

  it("asks git for the new commit when the branch's ref is not a plain file (a symbolic chain)", async () => {
    const { path } = await worktree();
    await git(["symbolic-ref", "refs/heads/alias", "refs/heads/harness/story-1"], { cwd: path });
    await git(["symbolic-ref", "HEAD", "refs/heads/alias"], { cwd: path });
    const { result, programs } = await countProcesses(() => commitWorktree(path, "empty\n", { stage: false }));
    expect(programs).toHaveLength(2);
    expect(result).toBe(await git(["rev-parse", "refs/heads/harness/story-1"], { cwd: path }));
  });

  it("starts no automatic gc after the commit, even where the repository's own config asks for it", async () => {
    const { repo, path } = await worktree();
    await git(["config", "gc.auto", "1"], { cwd: repo });
    await git(["config", "gc.autoDetach", "false"], { cwd: repo });
    const objects = join(repo, ".git", "objects");
    await makeReachable(repo, writeLooseObjectsIn17(objects, 3), "refs/harness/kept");
    await commitWorktree(path, "Story 1: x\n", { stage: false });
    // git's own auto gc (gc.auto=1) would have packed them away.
    expect(looseIn17(objects)).toBeGreaterThanOrEqual(3);
    expect(readdirSync(join(objects, "pack")).filter((name) => name.endsWith(".pack"))).toEqual([]);
  });
});
