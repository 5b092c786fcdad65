import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, indexMayHold, linkedWorktreeDirs, linkedWorktreesOn, readHeadCommit, worktreeGitDir } from "../../src/workspace/index.js";
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
    writeFileSync(join(linked, ".git"), `not gitdir: ${join(main, ".git", "worktrees", "wt")}\n`);
    expect(worktreeGitDir(linked)).toBeUndefined();
    writeFileSync(join(linked, ".git"), `gitdir: ${join(main, ".git", "worktrees", "wt")}`);
    expect(worktreeGitDir(linked)).toBe(join(main, ".git", "worktrees", "wt"));
  });

  it("reads a SHA-256 repository's ids, and no id with anything around it", async () => {
    const dir = join(makeTempDir(), "sha256");
    mkdirSync(dir);
    await git(["init", "-q", "--object-format=sha256"], { cwd: dir });
    writeFileSync(join(dir, "a.txt"), "a\n");
    const tip = await commitAll(dir, "initial");
    expect(tip).toMatch(/^[0-9a-f]{64}$/);
    expect(readHeadCommit(dir)).toBe(tip);
    const head = join(dir, ".git", "HEAD");
    writeFileSync(head, `${tip}\n`);
    expect(readHeadCommit(dir)).toBe(tip);
    for (const text of [`x${tip}\n`, `${tip}x\n`]) {
      writeFileSync(head, text);
      expect(readHeadCommit(dir)).toBeUndefined();
    }
  });

  it("does not know a HEAD or a branch ref that is not laid out as git writes it", async () => {
    const main = await repo();
    const tip = await git(["rev-parse", "HEAD"], { cwd: main });
    const head = join(main, ".git", "HEAD");
    expect(readHeadCommit(main)).toBe(tip);
    // A HEAD outside refs/heads, written by hand where git's check would refuse it.
    writeFileSync(join(main, ".git", "OUTSIDE"), `${tip}\n`);
    for (const text of ["not a head\n", "xref: refs/heads/main\n", "ref: refs/heads/main extra\n", "ref: refs/heads/../../OUTSIDE\n"]) {
      writeFileSync(head, text);
      expect(readHeadCommit(main)).toBeUndefined();
    }
    writeFileSync(head, "ref: refs/heads/main\n");
    writeFileSync(join(main, ".git", "refs", "heads", "main"), "not an id\n");
    expect(readHeadCommit(main)).toBeUndefined();
  });
});

describe("indexMayHold", () => {
  /** An index's 12-byte header alone: signature, version, no entries. */
  function header(signature: string, version: number): Buffer {
    const bytes = Buffer.alloc(12);
    bytes.write(signature, 0, "latin1");
    bytes.writeUInt32BE(version, 4);
    return bytes;
  }

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
    // Git writes version 3 only when an entry has extended flags (an intent to add has).
    writeFileSync(join(v3, "later.txt"), "later\n");
    await git(["add", "--intent-to-add", "later.txt"], { cwd: v3 });
    expect(readFileSync(join(v3, ".git", "index")).readUInt32BE(4)).toBe(3);
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
    writeFileSync(join(garbage, ".git", "index"), header("DIRC", 2));
    expect(indexMayHold(garbage, ".receipt")).toBe(false);
    writeFileSync(join(garbage, ".git", "index"), header("CRID", 2));
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

describe("linkedWorktreesOn", () => {
  /** What `git worktree list` says about `branch`. */
  async function listedOn(gitDir: string, branch: string): Promise<string[]> {
    const paths: string[] = [];
    let path = "";
    for (const line of (await git(["worktree", "list", "--porcelain"], { cwd: gitDir })).split("\n")) {
      if (line.startsWith("worktree ")) path = line.slice("worktree ".length);
      if (line === `branch refs/heads/${branch}`) paths.push(path);
    }
    return paths.sort();
  }

  it("finds what git worktree list finds in a bare cache: live, locked and gone worktrees on the branch", async () => {
    const source = await repo();
    const cache = join(makeTempDir(), "cache.git");
    await git(["clone", "-q", "--bare", source, cache], { cwd: makeTempDir() });
    expect(linkedWorktreesOn(cache, "story")).toEqual([]);
    const place = makeTempDir();
    await git(["branch", "story", "main"], { cwd: cache });
    await git(["worktree", "add", "-q", join(place, "a"), "story"], { cwd: cache });
    await git(["worktree", "add", "-q", "-f", join(place, "b"), "story"], { cwd: cache });
    await git(["worktree", "add", "-q", "-f", join(place, "gone"), "story"], { cwd: cache });
    await git(["worktree", "add", "-q", "--detach", join(place, "detached"), "story"], { cwd: cache });
    await git(["worktree", "add", "-q", "-b", "other", join(place, "other"), "main"], { cwd: cache });
    await git(["worktree", "lock", join(place, "b")], { cwd: cache });
    rmSync(join(place, "gone"), { recursive: true, force: true });
    const found = linkedWorktreesOn(cache, "story");
    expect(found?.sort()).toEqual(await listedOn(cache, "story"));
    expect(found?.sort()).toEqual([join(place, "a"), join(place, "b"), join(place, "gone")]);
    expect(linkedWorktreesOn(cache, "other")).toEqual(await listedOn(cache, "other"));
    expect(linkedWorktreesOn(cache, "stor")).toEqual([]);
  });

  it("leaves it to git when an entry is not laid out as git writes it, or the folder is no git folder", async () => {
    const source = await repo();
    const cache = join(makeTempDir(), "cache.git");
    await git(["clone", "-q", "--bare", source, cache], { cwd: makeTempDir() });
    const place = makeTempDir();
    await git(["worktree", "add", "-q", "-b", "story", join(place, "a"), "main"], { cwd: cache });
    const [id] = readdirSync(join(cache, "worktrees"));
    writeFileSync(join(cache, "worktrees", id as string, "gitdir"), join(place, "a"));
    expect(linkedWorktreesOn(cache, "story")).toBeUndefined();
    rmSync(join(cache, "worktrees", id as string, "gitdir"));
    expect(linkedWorktreesOn(cache, "story")).toBeUndefined();
    writeFileSync(join(cache, "worktrees", id as string, "gitdir"), `${join(place, "a", ".git")}\n`);
    rmSync(join(cache, "worktrees", id as string, "HEAD"));
    expect(linkedWorktreesOn(cache, "story")).toBeUndefined();
    expect(linkedWorktreesOn(makeTempDir(), "story")).toBeUndefined();
    const notAFolder = join(makeTempDir(), "bare");
    mkdirSync(notAFolder);
    writeFileSync(join(notAFolder, "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(join(notAFolder, "worktrees"), "");
    expect(linkedWorktreesOn(notAFolder, "story")).toBeUndefined();
  });
});

describe("linkedWorktreeDirs", () => {
  it("names what git rev-parse says of a linked worktree's top (its git folder and the common one), and nothing elsewhere", async () => {
    const main = await repo();
    const linked = await addWorktree(main, join(makeTempDir(), "linked"));
    const [gitDir, commonDir] = (await git(["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"], { cwd: linked })).split("\n");
    const asked = { gitDir, commonDir };
    expect(linkedWorktreeDirs(linked)).toEqual(asked);
    // A plain repository, a folder inside a worktree and a folder outside any are left to git.
    expect(linkedWorktreeDirs(main)).toBeUndefined();
    mkdirSync(join(linked, "sub"));
    expect(linkedWorktreeDirs(join(linked, "sub"))).toBeUndefined();
    expect(linkedWorktreeDirs(makeTempDir())).toBeUndefined();
    const odd = makeTempDir();
    writeFileSync(join(odd, ".git"), "not a gitdir line\n");
    expect(linkedWorktreeDirs(odd)).toBeUndefined();
    // A worktree entry whose commondir file is empty, names no repository, or is gone, is not guessed at.
    const commondir = readFileSync(join(gitDir as string, "commondir"), "utf8");
    for (const content of ["\n", "../nowhere\n"]) {
      writeFileSync(join(gitDir as string, "commondir"), content);
      expect(linkedWorktreeDirs(linked)).toBeUndefined();
    }
    rmSync(join(gitDir as string, "commondir"));
    expect(linkedWorktreeDirs(linked)).toBeUndefined();
    writeFileSync(join(gitDir as string, "commondir"), commondir);
    expect(linkedWorktreeDirs(linked)).toEqual(asked);
  });
});
