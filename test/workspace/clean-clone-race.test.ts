/**
 * The target's object store is shared with other tasks, which write into it while a clean clone
 * is made. A scratch file of theirs (`tmp_obj_*`, `tmp_pack_*`) that is gone by the time the
 * local clone copies it fails the copy ("failed to copy file to …"). The race is made
 * deterministic here: a Unix socket under such a name is listed like a file but can never be
 * opened (not even by root), so git's file-by-file copy meets the same failure on every run.
 */
import { mkdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { buildCleanClone, gitResult, runCleanCloneCheck } from "../../src/workspace/index.js";
import { look, observe, removeTemps, repoWith, temp, workingTreeTree, write } from "./clean-clone-fixtures.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const sandbox = sandboxFromEnv();

const servers: Server[] = [];

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  removeTemps();
});

/** Plants an unopenable file at `path`, as a vanishing scratch object looks to git's copy. */
async function plantUnopenable(path: string): Promise<void> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
}

/** A target with a change in its working tree and another writer's scratch files in its object store. */
async function targetMidWrite(): Promise<string> {
  const repo = await repoWith({ "a.txt": "one\n", "lib/b.txt": "two\n" });
  write(repo, { "a.txt": "changed\n", "new/c.txt": "new\n" });
  const objects = await look(repo, "rev-parse", "--path-format=absolute", "--git-path", "objects");
  mkdirSync(join(objects, "5e"), { recursive: true });
  await plantUnopenable(join(objects, "5e", "tmp_obj_race01"));
  await plantUnopenable(join(objects, "pack", "tmp_pack_race02"));
  return repo;
}

describe("a clean clone of a target another git process is writing into", () => {
  it("meets git's copy failure in a plain local clone (the planted file reproduces the race)", async () => {
    const repo = await targetMidWrite();
    const dir = temp("cc-plain-");
    const result = await gitResult(["clone", "-q", "--no-checkout", "--no-hardlinks", "--", repo, join(dir, "clone")], { cwd: dir });
    expect(result.exitCode).not.toBe(0);
    expect(result.tail).toMatch(/failed to copy file to .*tmp_(obj|pack)_race0/);
  });

  it("is still built: the user's commit, checked out, and the target untouched", async () => {
    const repo = await targetMidWrite();
    // First: the fixture's own `git add -A` borrows the target's objects and so refreshes their mtimes.
    const expected = await workingTreeTree(repo);
    const before = await observe(repo);
    const scratch = temp("cc-race-");
    const clone = await buildCleanClone({ repo, scratchDir: scratch, links: [] });
    expect(clone.tree).toBe(expected);
    expect(await look(clone.cloneDir, "rev-parse", "HEAD^{tree}")).toBe(expected);
    expect(await look(clone.cloneDir, "status", "--porcelain")).toBe("");
    expect(await observe(repo)).toEqual(before);
    rmSync(scratch, { recursive: true, force: true });
  });

  it("lets the check run the suite in it", async () => {
    const repo = await targetMidWrite();
    const result = await runCleanCloneCheck({
      sandbox,
      repo,
      command: 'test "$(cat a.txt)" = changed && test -f new/c.txt',
      links: [],
      scratchRoot: temp("cc-race-root-"),
    });
    expect({ ran: result.ran, exitCode: result.exitCode, reason: result.reason }).toEqual({ ran: true, exitCode: 0, reason: undefined });
  });
});
