import { chmodSync, existsSync, readdirSync, renameSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildCleanClone, git, runCleanCloneCheck } from "../../src/workspace/index.js";
import { look, observe, removeTemps, repoWith, run, temp, workingTreeTree, write } from "./clean-clone-fixtures.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const sandbox = sandboxFromEnv();

afterAll(removeTemps);

const NON_UTF8_NAME = Buffer.from([0x6c, 0x61, 0x74, 0x69, 0x6e, 0xe9, 0x2e, 0x74, 0x78, 0x74]);

/** A target whose working tree holds every kind of change git records, under awkward names. */
async function edgeCaseTarget(): Promise<string> {
  const repo = await repoWith({
    ".gitignore": "build/\n*.log\n",
    "deleted.txt": "gone soon\n",
    "renamed-from.txt": "moving\n",
    "staged-move.txt": "moving by git mv\n",
    "binary.bin": { content: Buffer.from([0, 1, 2, 255, 0, 10, 13, 0]), mode: 0o644 },
    "script.sh": { content: "#!/bin/sh\necho hi\n", mode: 0o644 },
    "file-to-dir": "a file\n",
    "with space.txt": "one\n",
    'quo"te.txt': "one\n",
    "-leading.txt": "one\n",
    "ünïcödé/naïve.txt": "one\n",
    "new\nline.txt": "one\n",
    "tracked.log": "tracked although ignored\n",
  });
  symlinkSync("renamed-from.txt", join(repo, "link"));
  await run(repo, "add", "link");
  await run(repo, "commit", "-q", "-m", "link");

  unlinkSync(join(repo, "deleted.txt"));
  renameSync(join(repo, "renamed-from.txt"), join(repo, "renamed to.txt"));
  await run(repo, "mv", "staged-move.txt", "moved by git.txt");
  write(repo, {
    "binary.bin": { content: Buffer.from([255, 0, 254, 0, 1, 2, 3]), mode: 0o644 },
    "new.bin": { content: Buffer.from([0, 0, 0, 200, 201]), mode: 0o644 },
    "with space.txt": "two\n",
    'quo"te.txt': "two\n",
    "-leading.txt": "two\n",
    "ünïcödé/naïve.txt": "two\n",
    "new\nline.txt": "two\n",
    "tracked.log": "changed although ignored\n",
    "-dash new.txt": "new\n",
    "tab\there 'q'.txt": "new\n",
    "日本語/ファイル.txt": "new\n",
    "new-exec.sh": { content: "#!/bin/sh\n", mode: 0o755 },
    "staged.txt": "staged\n",
    "intent.txt": "intent to add\n",
    "build/out.o": "ignored\n",
    "debug.log": "ignored\n",
  });
  await run(repo, "add", "staged.txt");
  await run(repo, "add", "-N", "intent.txt");
  writeFileSync(Buffer.concat([Buffer.from(`${repo}/`), NON_UTF8_NAME]), "latin-1 name\n");
  chmodSync(join(repo, "script.sh"), 0o755);
  rmSync(join(repo, "file-to-dir"));
  write(repo, { "file-to-dir/inside.txt": "now a folder\n" });
  unlinkSync(join(repo, "link"));
  symlinkSync("target with space", join(repo, "link"));
  symlinkSync("../-dash new.txt", join(repo, "ünïcödé/new link"));
  return repo;
}

describe("clean clone construction", () => {
  it("commits a tree equal to the target working tree's, ignored files left out", async () => {
    const target = await edgeCaseTarget();
    const expected = await workingTreeTree(target);
    const scratch = temp("cc-scratch-");
    const clone = await buildCleanClone({ repo: target, scratchDir: scratch, links: [] });
    expect(await look(clone.cloneDir, "rev-parse", `${clone.commit}^{tree}`)).toBe(expected);
    expect(clone.base).toBe(await look(target, "rev-parse", "HEAD"));
    expect(await look(clone.cloneDir, "rev-parse", "HEAD^")).toBe(clone.base);
    expect(await look(clone.cloneDir, "status", "--porcelain")).toBe("");
    expect(existsSync(join(clone.cloneDir, "build"))).toBe(false);
    expect(existsSync(join(clone.cloneDir, "debug.log"))).toBe(false);
    const modes = await look(clone.cloneDir, "ls-tree", "HEAD", "script.sh", "new-exec.sh", "link");
    expect(modes).toMatch(/^120000 blob \S+\tlink\n100755 blob \S+\tnew-exec\.sh\n100755 blob \S+\tscript\.sh$/);
    expect(await look(clone.cloneDir, "cat-file", "-p", "HEAD:link")).toBe("target with space");
    const author = await look(clone.cloneDir, "log", "-1", "--format=%an <%ae>");
    expect(author).toBe("story-harness <story-harness@users.noreply.github.com>");
  });

  it("builds from a linked worktree on its own HEAD and runs the suite in the matching subfolder", async () => {
    const main = await repoWith({ "a.txt": "main\n", "pkg/b.txt": "b\n" });
    const worktree = join(temp("cc-wt-"), "wt");
    await run(main, "worktree", "add", "-q", "-b", "story", worktree);
    write(worktree, { "pkg/b.txt": "changed in the worktree\n", "pkg/c.txt": "new\n" });
    await run(worktree, "commit", "-q", "-am", "worktree commit");
    write(worktree, { "pkg/b.txt": "uncommitted\n" });
    const expected = await workingTreeTree(worktree);
    const result = await runCleanCloneCheck({
      sandbox,
      repo: join(worktree, "pkg"),
      command: 'basename "$PWD"; cat b.txt; git rev-parse HEAD^{tree} HEAD^',
      links: [],
    });
    expect(result.ran).toBe(true);
    expect(result.outputTail).toBe(`pkg\nuncommitted\n${expected}\n${await look(worktree, "rev-parse", "HEAD")}`);
  });
});

describe("the target is only read", () => {
  it("leaves refs, HEAD, index bytes, stash, status and every file as they were; hooks, fsmonitor and diff drivers never run", async () => {
    const target = await repoWith({ "a.txt": "one\n", "stale.txt": "same content\n", "img.dat": "x\n" });
    write(target, { "a.txt": "stashed\n" });
    await run(target, "stash", "-q");
    const markers = temp("cc-markers-");
    const hooks = join(target, ".git", "hooks");
    const marker = (name: string): string => `#!/bin/sh\ntouch '${join(markers, name)}'\nexit 0\n`;
    for (const hook of ["post-index-change", "post-checkout", "pre-commit", "post-commit", "reference-transaction", "pre-auto-gc"]) {
      write(target, { [`.git/hooks/${hook}`]: { content: marker(hook), mode: 0o755 } });
    }
    write(target, {
      ".git/fsmonitor.sh": { content: marker("fsmonitor"), mode: 0o755 },
      ".git/extdiff.sh": { content: marker("external-diff"), mode: 0o755 },
      ".git/textconv.sh": { content: `${marker("textconv")}cat "$1"\n`, mode: 0o755 },
      ".git/info/attributes": "* diff=marker\n",
    });
    await run(target, "config", "core.fsmonitor", join(target, ".git/fsmonitor.sh"));
    await run(target, "config", "diff.external", join(target, ".git/extdiff.sh"));
    await run(target, "config", "diff.marker.command", join(target, ".git/extdiff.sh"));
    await run(target, "config", "diff.marker.textconv", join(target, ".git/textconv.sh"));
    write(target, { "a.txt": "changed\n", "img.dat": "y\n", "untracked.txt": "new\n" });
    // A stat change without a content change: any index refresh would rewrite the index.
    utimesSync(join(target, "stale.txt"), new Date("2001-01-01"), new Date("2001-01-01"));
    const before = await observe(target);

    const result = await runCleanCloneCheck({ sandbox, repo: target, command: "cat a.txt untracked.txt", links: [] });

    expect(result).toMatchObject({ ran: true, exitCode: 0, outputTail: "changed\nnew" });
    expect(await observe(target)).toEqual(before);
    expect(readdirSync(markers)).toEqual([]);
    // The fixture is live: git without the hardening fires the diff driver, fsmonitor and hooks.
    await git(["-c", `core.hooksPath=${hooks}`, "diff", "HEAD", "--", "img.dat"], { cwd: target });
    await git(["-c", `core.hooksPath=${hooks}`, "-c", `core.fsmonitor=${join(target, ".git/fsmonitor.sh")}`, "status"], { cwd: target });
    expect(readdirSync(markers)).toEqual(expect.arrayContaining(["external-diff", "fsmonitor", "post-index-change"]));
  });
});
