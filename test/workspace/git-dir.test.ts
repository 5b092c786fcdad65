import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, indexMayHold, readHeadCommit, worktreeGitDir } from "../../src/workspace/index.js";
import { addWorktree, commitAll, initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

async function repo(): Promise<string> {
  const dir = join(makeTempDir(), "repo");
  await initRepo(dir, { "a.txt": "a\n" });
  return dir;
}

describe("readHeadCommit", () => {
  it("reads what git reads: a repository's branch, a linked worktree's branch, a detached HEAD", async () => {
    const main = await repo();
    expect(readHeadCommit(main)).toBe(await git(["rev-parse", "HEAD"], { cwd: main }));
    const linked = await addWorktree(main, join(makeTempDir(), "wt"), "story");
    writeFileSync(join(linked, "b.txt"), "b\n");
    const tip = await commitAll(linked, "on the branch");
    expect(readHeadCommit(linked)).toBe(tip);
    expect(readHeadCommit(main)).not.toBe(tip);
    await git(["checkout", "-q", "--detach", "HEAD~1"], { cwd: linked });
    expect(readHeadCommit(linked)).toBe(await git(["rev-parse", "HEAD"], { cwd: linked }));
  });

  it("does not know a packed ref, a symbolic chain, an unborn branch or a folder that is no worktree", async () => {
    const main = await repo();
    await git(["pack-refs", "--all"], { cwd: main });
    expect(readHeadCommit(main)).toBeUndefined();
    const chained = await repo();
    await git(["symbolic-ref", "refs/heads/alias", "refs/heads/main"], { cwd: chained });
    await git(["symbolic-ref", "HEAD", "refs/heads/alias"], { cwd: chained });
    expect(readHeadCommit(chained)).toBeUndefined();
    const unborn = join(makeTempDir(), "unborn");
    await initRepo(unborn);
    expect(readHeadCommit(unborn)).toBeUndefined();
    expect(readHeadCommit(makeTempDir())).toBeUndefined();
  });

  it("follows a relative gitdir and refuses a .git file that is not one", async () => {
    const main = await repo();
    const linked = await addWorktree(main, join(main, "..", "wt"), "rel");
    writeFileSync(join(linked, ".git"), "gitdir: ../repo/.git/worktrees/wt\n");
    expect(worktreeGitDir(linked)).toBe(join(main, ".git", "worktrees", "wt"));
    expect(readHeadCommit(linked)).toBe(await git(["rev-parse", "HEAD"], { cwd: main }));
    writeFileSync(join(linked, ".git"), "not a gitdir line\n");
    expect(worktreeGitDir(linked)).toBeUndefined();
    expect(readHeadCommit(linked)).toBeUndefined();
    expect(indexMayHold(linked, "a.txt")).toBe(true);
  });
});

describe("indexMayHold", () => {
  it("is false only when a version 2 or 3 index certainly lacks the path", async () => {
    const main = await repo();
    expect(indexMayHold(main, ".receipt")).toBe(false);
    expect(indexMayHold(main, "a.txt")).toBe(true);
    writeFileSync(join(main, ".receipt"), "{}\n");
    await git(["add", "-f", ".receipt"], { cwd: main });
    expect(indexMayHold(main, ".receipt")).toBe(true);
    await git(["rm", "-q", "--cached", ".receipt"], { cwd: main });
    expect(indexMayHold(main, ".receipt")).toBe(false);
  });

  it("reads an index of version 3 as one of version 2", async () => {
    const v3 = await repo();
    await git(["update-index", "--index-version", "3"], { cwd: v3 });
    expect(indexMayHold(v3, ".receipt")).toBe(false);
    expect(indexMayHold(v3, "a.txt")).toBe(true);
  });

  it("says it may when the index is of version 4, split, not an index, or unreadable", async () => {
    const v4 = await repo();
    await git(["update-index", "--index-version", "4"], { cwd: v4 });
    expect(indexMayHold(v4, ".receipt")).toBe(true);
    const split = await repo();
    await git(["update-index", "--split-index"], { cwd: split });
    expect(indexMayHold(split, ".receipt")).toBe(true);
    const garbage = await repo();
    writeFileSync(join(garbage, ".git", "index"), "not an index at all");
    expect(indexMayHold(garbage, ".receipt")).toBe(true);
    writeFileSync(join(garbage, ".git", "index"), "DIRC");
    expect(indexMayHold(garbage, ".receipt")).toBe(true);
    const folder = await repo();
    rmSync(join(folder, ".git", "index"));
    mkdirSync(join(folder, ".git", "index"));
    expect(indexMayHold(folder, ".receipt")).toBe(true);
  });

  it("is false when there is no index at all", async () => {
    const unborn = join(makeTempDir(), "unborn");
    await initRepo(unborn);
    expect(indexMayHold(unborn, ".receipt")).toBe(false);
  });
});
