/**
 * The check's commit object, written by the harness instead of `git commit-tree`: the same id as
 * git's own for the same fields, in SHA-1 and SHA-256 repositories, and a clone built with it
 * passes `git fsck --strict`.
 */
import { readdirSync, readFileSync, statSync, symlinkSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import { buildCleanClone, git, HARNESS_IDENTITY } from "../../src/workspace/index.js";
import { commitBody, objectHash, writeCommitObject, type CommitFields } from "../../src/workspace/clean-clone/commit-object.js";
import { look, removeTemps, run, temp, write } from "./clean-clone-fixtures.js";

afterAll(removeTemps);

const HARNESS = { name: HARNESS_IDENTITY.GIT_AUTHOR_NAME, email: HARNESS_IDENTITY.GIT_AUTHOR_EMAIL };

/** A repository of the given object format with one commit on main. */
async function repoOf(format: "sha1" | "sha256"): Promise<string> {
  const repo = temp("cc-format-");
  await run(repo, "init", "-q", "-b", "main", `--object-format=${format}`);
  write(repo, { "a.txt": "a\n", "dir/b.txt": "b\n" });
  await run(repo, "add", "-A");
  await run(repo, "commit", "-q", "-m", "one");
  return repo;
}

describe("the commit object", () => {
  it.each(["sha1", "sha256"] as const)("has the id git's commit-tree gives the same fields (%s)", async (format) => {
    const repo = await repoOf(format);
    const parent = await look(repo, "rev-parse", "HEAD");
    const tree = await look(repo, "rev-parse", "HEAD^{tree}");
    expect(objectHash(tree)).toBe(format);
    const other = { name: "Ana Ö", email: "ana@example.org" };
    for (const message of ["one line", "ends in a newline\n", "subject\n\nbody with ünïcode"]) {
      const fields: CommitFields = { tree, parent, author: HARNESS, committer: other, time: 1_700_000_123, message };
      const env = {
        ...HARNESS_IDENTITY,
        GIT_COMMITTER_NAME: other.name,
        GIT_COMMITTER_EMAIL: other.email,
        GIT_AUTHOR_DATE: "@1700000123 +0000",
        GIT_COMMITTER_DATE: "@1700000123 +0000",
      };
      const theirs = await git(["commit-tree", tree, "-p", parent, "-m", message], { cwd: repo, env });
      const objects = temp("cc-objects-");
      const ours = await writeCommitObject(objects, fields);
      expect(ours).toBe(theirs);
      const stored = inflateSync(readFileSync(join(objects, ours.slice(0, 2), ours.slice(2)))).toString("utf8");
      expect(stored).toBe(`commit ${Buffer.byteLength(commitBody(fields))}\0${commitBody(fields)}`);
      expect(await look(repo, "cat-file", "commit", theirs)).toBe(commitBody(fields).replace(/\n$/, ""));
      // Written again (an object already there): the same id, nothing thrown, the file left as it was.
      const file = join(objects, ours.slice(0, 2), ours.slice(2));
      utimesSync(file, 1_000_000, 1_000_000);
      expect(await writeCommitObject(objects, fields)).toBe(ours);
      expect(readdirSync(join(objects, ours.slice(0, 2)))).toEqual([ours.slice(2)]);
      expect(statSync(file).mtimeMs).toBe(1_000_000_000);
    }
  });

  it("is read-only, as git leaves its objects", async () => {
    const objects = temp("cc-objects-");
    const id = await writeCommitObject(objects, { tree: "a".repeat(40), parent: "b".repeat(40), author: HARNESS, committer: HARNESS, time: 1, message: "m" });
    expect(statSync(join(objects, id.slice(0, 2), id.slice(2))).mode & 0o777).toBe(0o444);
  });

  it("refuses an id that is no full SHA-1 or SHA-256", () => {
    for (const id of ["", "a".repeat(39), "a".repeat(41), "A".repeat(40), "g".repeat(64), ` ${"a".repeat(40)}`, ` ${"a".repeat(64)}`, `${"a".repeat(64)}\n`]) {
      expect(() => objectHash(id)).toThrow(`not a full object id: ${JSON.stringify(id)}`);
    }
    expect(objectHash("0".repeat(40))).toBe("sha1");
    expect(objectHash("f".repeat(64))).toBe("sha256");
  });

  it("fails when the object cannot be written, and when its folder cannot be made", async () => {
    const fields = { tree: "c".repeat(40), parent: "d".repeat(40), author: HARNESS, committer: HARNESS, time: 2, message: "m" };
    const fanOut = (await writeCommitObject(temp("cc-objects-"), fields)).slice(0, 2);
    // Root passes every permission bit; a folder of /proc takes no new file, and a file is no folder.
    const unwritable = temp("cc-objects-");
    symlinkSync("/proc/self/fdinfo", join(unwritable, fanOut));
    await expect(writeCommitObject(unwritable, fields)).rejects.toThrow(/ENOENT|EACCES|EPERM/);
    const blocked = temp("cc-objects-");
    write(blocked, { [fanOut]: "not a folder" });
    await expect(writeCommitObject(blocked, fields)).rejects.toThrow(/EEXIST|ENOTDIR/);
  });
});

describe("a clean clone built with it", () => {
  it.each(["sha1", "sha256"] as const)("passes git fsck --strict and holds the user's change on HEAD (%s)", async (format) => {
    const repo = await repoOf(format);
    write(repo, { "a.txt": "changed\n", "new.txt": "new\n" });
    const before = Math.floor(Date.now() / 1000);
    const clone = await buildCleanClone({ repo, scratchDir: temp("cc-build-"), links: [] });
    const after = Math.floor(Date.now() / 1000);
    expect(clone.commit).toHaveLength(format === "sha1" ? 40 : 64);
    // Made now, in whole seconds, in UTC.
    const [authored = "", committed = "", zone = ""] = (await look(clone.cloneDir, "log", "-1", "--format=%at%n%ct%n%ad", "--date=format:%z")).split("\n");
    expect(authored).toBe(committed);
    expect(Number(authored)).toBeGreaterThanOrEqual(before);
    expect(Number(authored)).toBeLessThanOrEqual(after);
    expect(zone).toBe("+0000");
    expect(await look(clone.cloneDir, "rev-parse", "--show-object-format")).toBe(format);
    expect(await look(clone.cloneDir, "fsck", "--strict", "--no-dangling")).toBe("");
    expect(await look(clone.cloneDir, "rev-parse", "HEAD", "HEAD^{tree}", "HEAD^")).toBe(`${clone.commit}\n${clone.tree}\n${clone.base}`);
    expect(await look(clone.cloneDir, "show", "HEAD:a.txt", "HEAD:new.txt")).toBe("changed\nnew");
  });
});
