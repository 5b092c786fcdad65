import { createHash } from "node:crypto";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  createTaskWorktree,
  git,
  gitResult,
  pathComponent,
  removeTaskWorktree,
  resolveCommits,
  storyDirName,
  taskWorktreePath,
  WorktreeError,
} from "../../src/workspace/index.js";
import { countProcesses } from "../support/processes.js";
import { commitAll, initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

async function repoWithHome(): Promise<{ repo: string; home: string; base: string }> {
  const dir = makeTempDir("harness-worktree-");
  const repo = join(dir, "repo");
  const base = (await initRepo(repo, { "a.txt": "a\n" })) ?? "";
  return { repo, home: join(dir, "home"), base };
}

describe("task worktrees", () => {
  it("creates the branch from the base ref in a folder per task, and removes it whatever it holds", async () => {
    const { repo, home, base } = await repoWithHome();
    const worktree = await createTaskWorktree({
      repoDir: repo,
      harnessHome: home,
      storyId: "42",
      taskId: "task-1",
      branch: "harness/story-42",
      baseRef: "HEAD",
    });
    expect(worktree).toEqual({ taskId: "task-1", path: taskWorktreePath(home, "42", "task-1"), branch: "harness/story-42", base });
    expect(await git(["symbolic-ref", "--short", "HEAD"], { cwd: worktree.path })).toBe("harness/story-42");
    expect(await git(["symbolic-ref", "--short", "HEAD"], { cwd: repo })).toBe("main");
    writeFileSync(join(worktree.path, "untracked.txt"), "x");
    await removeTaskWorktree(repo, worktree.path);
    expect(existsSync(worktree.path)).toBe(false);
    expect(await git(["worktree", "list", "--porcelain"], { cwd: repo })).not.toContain("task-1");
    expect(await git(["rev-parse", "harness/story-42"], { cwd: repo })).toBe(base);
  });

  it("creates and removes several tasks' worktrees of one repository at once (git does not guard its worktree list)", async () => {
    const { repo, home } = await repoWithHome();
    const ids = [1, 2, 3, 4, 5, 6];
    const made = await Promise.all(
      ids.map((n) =>
        createTaskWorktree({ repoDir: repo, harnessHome: home, storyId: String(n), taskId: `task-${n}`, branch: `harness/story-${n}`, baseRef: "HEAD" }),
      ),
    );
    expect(made.map((worktree) => existsSync(worktree.path))).toEqual(ids.map(() => true));
    await Promise.all(made.map((worktree) => removeTaskWorktree(repo, worktree.path)));
    expect((await git(["worktree", "list", "--porcelain"], { cwd: repo })).split("\n").filter((line) => line.startsWith("worktree "))).toHaveLength(1);
  });

  it("removes the entry of a worktree whose folder was removed by hand, and the branch can be checked out again", async () => {
    const { repo, home } = await repoWithHome();
    const gone = await createTaskWorktree({ repoDir: repo, harnessHome: home, storyId: "9", taskId: "task-1", branch: "harness/story-9", baseRef: "HEAD" });
    rmSync(gone.path, { recursive: true, force: true });
    await removeTaskWorktree(repo, gone.path);
    expect(await git(["worktree", "list", "--porcelain"], { cwd: repo })).not.toContain("task-1");
    const again = await createTaskWorktree({ repoDir: repo, harnessHome: home, storyId: "9", taskId: "task-2", branch: "harness/story-9", baseRef: "HEAD" });
    expect(await git(["symbolic-ref", "--short", "HEAD"], { cwd: again.path })).toBe("harness/story-9");
  });

  it("continues an existing branch from its tip, in a different folder for a different task", async () => {
    const { repo, home } = await repoWithHome();
    const first = await createTaskWorktree({ repoDir: repo, harnessHome: home, storyId: "42", taskId: "task-1", branch: "harness/story-42", baseRef: "HEAD" });
    writeFileSync(join(first.path, "work.txt"), "work\n");
    const tip = await commitAll(first.path, "work so far");
    await removeTaskWorktree(repo, first.path);
    const second = await createTaskWorktree({ repoDir: repo, harnessHome: home, storyId: "42", taskId: "task-2", branch: "harness/story-42", baseRef: "main" });
    expect(second.path).not.toBe(first.path);
    expect(second.base).toBe(tip);
    expect(existsSync(join(second.path, "work.txt"))).toBe(true);
  });

  it("refuses an invalid branch name and a task folder that already exists", async () => {
    const { repo, home } = await repoWithHome();
    const args = { repoDir: repo, harnessHome: home, storyId: "7", taskId: "t", baseRef: "HEAD" };
    await expect(createTaskWorktree({ ...args, branch: "bad..name" })).rejects.toThrow(WorktreeError);
    await createTaskWorktree({ ...args, branch: "harness/story-7" });
    await expect(createTaskWorktree({ ...args, branch: "harness/story-7" })).rejects.toThrow(/already exists/);
    expect(taskWorktreePath(home, "../../etc", "t")).toMatch(new RegExp(`^${join(home, "worktrees")}/etc-[0-9a-f]{8}/t$`));
  });

  it("gives distinct stories distinct folders, readable, even where their safe names would meet", () => {
    expect(storyDirName("greet-users")).toBe("greet-users");
    expect(storyDirName("42")).toBe("42");
    const names = ["octo/repo#42", "octo-repo/42", "other/repo#42", "octo/repo#4"].map(storyDirName);
    expect(new Set(names).size).toBe(4);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_][A-Za-z0-9._-]*-[0-9a-f]{8}$/);
    expect(storyDirName("octo/repo#42")).toMatch(/^octo-repo-42-/);
    expect(storyDirName(`${"x/".repeat(100)}#1`).length).toBeLessThanOrEqual(80);
  });
});

describe("task worktrees: edges", () => {
  it("checks out a plan task's worktree detached at the base ref, making no branch", async () => {
    const { repo, home, base } = await repoWithHome();
    writeFileSync(join(repo, "b.txt"), "b\n");
    await commitAll(repo, "second");
    const worktree = await createTaskWorktree({
      repoDir: repo,
      harnessHome: home,
      storyId: "5",
      taskId: "t-a",
      branch: "harness/story-5",
      baseRef: "main~1",
      detach: true,
    });
    expect(worktree).toEqual({ taskId: "t-a", path: taskWorktreePath(home, "5", "t-a"), branch: "harness/story-5", base });
    expect(await git(["rev-parse", "HEAD"], { cwd: worktree.path })).toBe(base);
    expect((await gitResult(["symbolic-ref", "-q", "HEAD"], { cwd: worktree.path })).exitCode).not.toBe(0);
    expect((await gitResult(["rev-parse", "--verify", "--quiet", "refs/heads/harness/story-5"], { cwd: repo })).exitCode).not.toBe(0);
    expect(existsSync(join(worktree.path, "b.txt"))).toBe(false);
  });

  it("starts a new branch from the base ref, not from HEAD", async () => {
    const { repo, home, base } = await repoWithHome();
    writeFileSync(join(repo, "b.txt"), "b\n");
    await commitAll(repo, "second");
    const worktree = await createTaskWorktree({ repoDir: repo, harnessHome: home, storyId: "6", taskId: "t", branch: "harness/story-6", baseRef: "main~1" });
    expect(worktree.base).toBe(base);
    expect(await git(["rev-parse", "harness/story-6"], { cwd: repo })).toBe(base);
    expect(await git(["symbolic-ref", "--short", "HEAD"], { cwd: worktree.path })).toBe("harness/story-6");
  });

  it("names the worktree and the branch in its errors", async () => {
    const { repo, home } = await repoWithHome();
    const args = { repoDir: repo, harnessHome: home, storyId: "8", taskId: "t", baseRef: "HEAD" };
    const path = taskWorktreePath(home, "8", "t");
    const invalid = (await createTaskWorktree({ ...args, branch: "bad..name" }).catch((e: unknown) => e)) as WorktreeError;
    expect(invalid).toBeInstanceOf(WorktreeError);
    expect({ name: invalid.name, failureClass: invalid.failureClass, path: invalid.path, branch: invalid.branch, message: invalid.message }).toEqual({
      name: "WorktreeError",
      failureClass: "internal-error",
      path,
      branch: "bad..name",
      message: "'bad..name' is not a valid branch name",
    });
    expect(existsSync(path)).toBe(false);
    await createTaskWorktree({ ...args, branch: "harness/story-8" });
    await expect(createTaskWorktree({ ...args, branch: "harness/story-8" })).rejects.toMatchObject({
      path,
      branch: "harness/story-8",
      message: `task worktree ${path} already exists`,
    });
  });

  it("removes a worktree git no longer recognises (its .git file gone), folder and entry", async () => {
    const { repo, home } = await repoWithHome();
    const worktree = await createTaskWorktree({ repoDir: repo, harnessHome: home, storyId: "3", taskId: "t", branch: "harness/story-3", baseRef: "HEAD" });
    rmSync(join(worktree.path, ".git"));
    writeFileSync(join(worktree.path, "left.txt"), "x");
    await removeTaskWorktree(repo, worktree.path);
    expect(existsSync(worktree.path)).toBe(false);
    expect(await git(["worktree", "list", "--porcelain"], { cwd: repo })).not.toContain(worktree.path);
  });

  it("removes a locked worktree, folder and entry (prune alone keeps a locked entry)", async () => {
    const { repo, home } = await repoWithHome();
    const worktree = await createTaskWorktree({ repoDir: repo, harnessHome: home, storyId: "4", taskId: "t", branch: "harness/story-4", baseRef: "HEAD" });
    await git(["worktree", "lock", "--reason", "held", worktree.path], { cwd: repo });
    await removeTaskWorktree(repo, worktree.path);
    expect(existsSync(worktree.path)).toBe(false);
    expect(await git(["worktree", "list", "--porcelain"], { cwd: repo })).not.toContain(worktree.path);
  });

  it("makes a worktree with two git processes and removes it with one when git can", async () => {
    const { repo, home, base } = await repoWithHome();
    const args = { repoDir: repo, harnessHome: home, storyId: "2", taskId: "t", branch: "harness/story-2", baseRef: "main" };
    const made = await countProcesses(() => createTaskWorktree(args));
    expect(made.programs).toEqual(["git", "git"]);
    expect(made.result.base).toBe(base);
    const removed = await countProcesses(() => removeTaskWorktree(repo, made.result.path));
    expect(removed.programs).toEqual(["git"]);
    expect(await git(["worktree", "list", "--porcelain"], { cwd: repo })).not.toContain(made.result.path);
    // Continued from the branch's tip with a base that names nothing: the base is not needed.
    const again = await countProcesses(() => createTaskWorktree({ ...args, taskId: "t2", baseRef: "refs/heads/none" }));
    expect(again.programs).toEqual(["git", "git"]);
    expect(again.result.base).toBe(base);
  });

  it("names a base that is no commit, making nothing", async () => {
    const { repo, home } = await repoWithHome();
    const args = { repoDir: repo, harnessHome: home, storyId: "3", taskId: "t", branch: "harness/story-3", baseRef: "refs/heads/none" };
    await expect(createTaskWorktree(args)).rejects.toMatchObject({
      name: "WorktreeError",
      branch: "harness/story-3",
      message: `'refs/heads/none' names no commit in ${repo}`,
    });
    await expect(createTaskWorktree({ ...args, baseRef: "main\nHEAD" })).rejects.toThrow(WorktreeError);
    expect(existsSync(taskWorktreePath(home, "3", "t"))).toBe(false);
  });

  it("resolves several refs with one process, each to its commit or to nothing", async () => {
    const { repo, base } = await repoWithHome();
    const tree = await git(["rev-parse", "HEAD^{tree}"], { cwd: repo });
    const { result, programs } = await countProcesses(() =>
      resolveCommits(repo, ["main", "refs/heads/none", tree, "HEAD", "a\nb", base, "main\r", "0".repeat(40), "main"]),
    );
    expect(programs).toEqual(["git"]);
    expect(result).toEqual([base, undefined, undefined, base, undefined, base, undefined, undefined, base]);
  });

  it("makes each task id one safe path component", () => {
    const home = "/h";
    const folder = (taskId: string): string => taskWorktreePath(home, "s", taskId);
    expect(folder("task-1.a_B")).toBe("/h/worktrees/s/task-1.a_B");
    expect(folder("a b//c")).toBe("/h/worktrees/s/a-b-c");
    expect(folder("..-.hidden")).toBe("/h/worktrees/s/hidden");
    expect(folder("a..b")).toBe("/h/worktrees/s/a..b");
    expect(folder("")).toBe("/h/worktrees/s/_");
    expect(folder("/../")).toBe("/h/worktrees/s/_");
    expect(folder("x".repeat(100))).toBe(`/h/worktrees/s/${"x".repeat(80)}`);
    expect(pathComponent("a/b")).toBe("a-b");
  });

  it("names a story's folder by its safe name and the first 8 hex digits of the exact id's SHA-256", () => {
    const id = "octo/repo#42";
    expect(storyDirName(id)).toBe(`octo-repo-42-${createHash("sha256").update(id).digest("hex").slice(0, 8)}`);
    const long = `${"ab/".repeat(40)}#1`;
    const name = storyDirName(long);
    expect(name).toBe(`${pathComponent(long).slice(0, 71)}-${createHash("sha256").update(long).digest("hex").slice(0, 8)}`);
    expect(name).toHaveLength(80);
  });
});
