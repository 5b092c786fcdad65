/**
 * Construction of the clean clone, step by step, without running a suite: locating the target,
 * the user's commit built on a copy of its index, the clone checked out on the target's branch
 * (or detached, or shallow), and every failure a build error naming its step. Each case builds
 * one or two small clones, so the whole file is cheap enough to run once per mutant.
 */
import { existsSync, readdirSync, rmSync, symlinkSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { buildCleanClone, CleanCloneBuildError, type BuiltCleanClone, type BuildCleanCloneOptions } from "../../src/workspace/index.js";
import { resolveTarget } from "../../src/workspace/clean-clone/target.js";
import { look, removeTemps, repoWith, run, temp, write } from "./clean-clone-fixtures.js";

afterAll(removeTemps);

const build = (options: Omit<BuildCleanCloneOptions, "scratchDir"> & { scratchDir?: string }): Promise<BuiltCleanClone> =>
  buildCleanClone({ links: [], scratchDir: temp("cc-build-"), ...options });

async function buildError(options: Omit<BuildCleanCloneOptions, "scratchDir"> & { scratchDir?: string }): Promise<CleanCloneBuildError> {
  const error: unknown = await build(options).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(CleanCloneBuildError);
  return error as CleanCloneBuildError;
}

describe("resolveTarget", () => {
  it("locates the top, the caller's prefix, HEAD, its branch and the index", async () => {
    const repo = await repoWith({ "pkg/sub/a.txt": "a\n" });
    const head = await look(repo, "rev-parse", "HEAD");
    expect(await resolveTarget(join(repo, "pkg", "sub"))).toEqual({
      top: repo,
      prefix: "pkg/sub/",
      base: head,
      branch: "main",
      indexFile: join(repo, ".git", "index"),
    });
    await run(repo, "checkout", "-q", "--detach");
    expect(await resolveTarget(repo)).toEqual({ top: repo, prefix: "", base: head, indexFile: join(repo, ".git", "index") });
  });

  it("says why a folder is no target: not a directory, outside git, or without a commit", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    await expect(resolveTarget(join(repo, "a.txt"))).rejects.toThrow(new CleanCloneBuildError("resolve", join(repo, "a.txt"), "is not a directory"));
    await expect(resolveTarget(join(repo, "missing"))).rejects.toThrow(new CleanCloneBuildError("resolve", join(repo, "missing"), "is not a directory"));
    // Through the build, a step's own error comes out as it was, not wrapped in another.
    const built = await buildError({ repo: join(repo, "missing") });
    expect(built.message).toBe(`clean clone of ${join(repo, "missing")} could not be built (resolve): is not a directory`);
    const plain = temp("cc-plain-");
    const outside = await resolveTarget(plain).catch((error: unknown) => error);
    expect(outside).toMatchObject({ step: "resolve", repo: plain });
    expect((outside as CleanCloneBuildError).detail).toMatch(/^is not inside a git working tree \(fatal: not a git repository.*\)$/);
    const empty = temp("cc-empty-");
    await run(empty, "init", "-q");
    await expect(resolveTarget(empty)).rejects.toThrow(new CleanCloneBuildError("resolve", empty, "has no commit to clone (HEAD is unborn)"));
  });
});

describe("buildCleanClone", () => {
  it("commits the working tree on HEAD as the harness, checks it out on the target's branch, and reports what it built", async () => {
    const repo = await repoWith({ "pkg/a.txt": "a\n", "b.txt": "b\n" });
    write(repo, { "pkg/a.txt": "changed\n", "new.txt": "new\n" });
    const head = await look(repo, "rev-parse", "HEAD");
    const scratchDir = temp("cc-build-");
    const clone = await buildCleanClone({ repo: join(repo, "pkg"), scratchDir, links: [] });
    expect(clone).toEqual({
      cloneDir: join(scratchDir, "clone"),
      workDir: join(scratchDir, "clone", "pkg/"),
      commit: await look(clone.cloneDir, "rev-parse", "HEAD"),
      tree: await look(clone.cloneDir, "rev-parse", "HEAD^{tree}"),
      base: head,
      targetTop: repo,
      linked: [],
      warnings: [],
    });
    expect(await look(clone.cloneDir, "log", "-1", "--format=%P%n%an <%ae>%n%cn <%ce>%n%s")).toBe(
      `${head}\nstory-harness <story-harness@users.noreply.github.com>\nstory-harness <story-harness@users.noreply.github.com>\nclean-clone check: the target's working tree on ${head}`,
    );
    expect(await look(clone.cloneDir, "symbolic-ref", "HEAD")).toBe("refs/heads/main");
    expect(await look(clone.cloneDir, "show", "HEAD:pkg/a.txt")).toBe("changed");
    expect(await look(clone.cloneDir, "status", "--porcelain", "--untracked-files=all")).toBe("");
    expect(await look(clone.cloneDir, "config", "--local", "gc.auto")).toBe("0");
    expect(await look(clone.cloneDir, "config", "--local", "maintenance.auto")).toBe("false");
    // The scratch holds the clone and the scratch index only; the target has no new ref or object.
    expect(readdirSync(scratchDir).sort()).toEqual(["clone", "index"]);
    expect(await look(repo, "cat-file", "-t", clone.commit).catch(() => "missing")).toBe("missing");
  });

  it("checks a detached HEAD out detached, and a linked worktree's branch on its own HEAD", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    await run(repo, "checkout", "-q", "--detach");
    write(repo, { "a.txt": "detached\n" });
    const detached = await build({ repo });
    expect(await look(detached.cloneDir, "rev-parse", "--symbolic-full-name", "HEAD")).toBe("HEAD");
    expect(await look(detached.cloneDir, "rev-parse", "HEAD")).toBe(detached.commit);
    expect(await look(detached.cloneDir, "for-each-ref", "--format=%(refname)", "refs/heads")).toBe("refs/heads/main");

    const main = await repoWith({ "a.txt": "a\n" });
    const worktree = join(temp("cc-wt-"), "wt");
    await run(main, "worktree", "add", "-q", "-b", "story", worktree);
    write(worktree, { "a.txt": "in the worktree\n" });
    for (const depth of [undefined, 1]) {
      const clone = await build({ repo: worktree, ...(depth ? { depth } : {}) });
      expect(await look(clone.cloneDir, "symbolic-ref", "HEAD")).toBe("refs/heads/story");
      expect(await look(clone.cloneDir, "rev-parse", "refs/heads/story")).toBe(clone.commit);
      expect(await look(clone.cloneDir, "show", "HEAD:a.txt")).toBe("in the worktree");
    }
  });

  it("with a depth, clones only the last commits from a history clone beside it", async () => {
    const repo = await repoWith({ "v.txt": "1\n" });
    write(repo, { "v.txt": "2\n" });
    await run(repo, "commit", "-q", "-am", "two");
    write(repo, { "v.txt": "3\n" });
    const scratchDir = temp("cc-build-");
    const shallow = await buildCleanClone({ repo, scratchDir, links: [], depth: 2 });
    expect(readdirSync(scratchDir).sort()).toEqual(["clone", "history", "index"]);
    expect(await look(shallow.cloneDir, "rev-list", "--count", "HEAD")).toBe("2");
    expect(await look(shallow.cloneDir, "rev-parse", "--is-shallow-repository")).toBe("true");
    expect(await look(shallow.cloneDir, "symbolic-ref", "HEAD")).toBe("refs/heads/main");
    expect(await look(shallow.cloneDir, "config", "--local", "gc.auto")).toBe("0");
    expect(await look(shallow.cloneDir, "status", "--porcelain")).toBe("");
    await run(repo, "checkout", "-q", "--detach");
    const detached = await build({ repo, depth: 1 });
    expect(await look(detached.cloneDir, "rev-parse", "--symbolic-full-name", "HEAD")).toBe("HEAD");
    expect(await look(detached.cloneDir, "rev-parse", "HEAD")).toBe(detached.commit);
    expect(await look(detached.cloneDir, "rev-list", "--count", "HEAD")).toBe("1");
    // No branch is made for a detached target, in the history clone or the shallow one.
    expect(await look(detached.cloneDir, "for-each-ref", "--format=%(refname)", "refs/heads")).toBe("");
  });

  it("clones the target's top whatever spelling of it or folder inside it is given, with or without a depth", async () => {
    const repo = await repoWith({ "a.txt": "a\n", "sub/b.txt": "b\n" });
    write(repo, { "a.txt": "changed\n" });
    const spelling = join(temp("cc-link-"), "via-link");
    symlinkSync(repo, spelling);
    for (const given of [spelling, join(spelling, "sub"), join(repo, "sub"), `${repo}/`]) {
      for (const depth of [undefined, 1]) {
        const clone = await build({ repo: given, ...(depth ? { depth } : {}) });
        expect(clone.targetTop).toBe(repo);
        expect(await look(clone.cloneDir, "show", "HEAD:a.txt")).toBe("changed");
        // Cloned from the top itself, not from the spelling given (an early clone of it is not kept).
        const history = depth ? join(clone.cloneDir, "..", "history") : clone.cloneDir;
        expect(await look(history, "config", "remote.origin.url")).toBe(repo);
      }
    }
  });

  it("leaves a scratch folder inside the target's working tree out of the commit", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const scratchDir = join(repo, "tmp", "scratch space");
    write(repo, { "tmp/scratch space/.keep": "", "b.txt": "b\n" });
    rmSync(join(scratchDir, ".keep"));
    const clone = await buildCleanClone({ repo, scratchDir, links: [] });
    expect(await look(clone.cloneDir, "ls-tree", "-r", "--name-only", "HEAD")).toBe("a.txt\nb.txt");
  });

  it("starts from HEAD's tree when the target has no index, keeping tracked files its ignores would drop", async () => {
    const repo = await repoWith({ ".gitignore": "*.log\n", "a.txt": "a\n" });
    write(repo, { "kept.log": "tracked although ignored\n" });
    await run(repo, "add", "-f", "kept.log");
    await run(repo, "commit", "-q", "-m", "force-added");
    rmSync(join(repo, ".git", "index"));
    const clone = await build({ repo });
    expect(await look(clone.cloneDir, "ls-tree", "-r", "--name-only", "HEAD")).toBe(".gitignore\na.txt\nkept.log");
    expect(existsSync(join(repo, ".git", "index"))).toBe(false);
  });

  it("sees a same-size edit git can tell only by content, even when the index was written just before a second's end", async () => {
    // Racy git: an entry whose mtime is not older than the index file's is compared by content.
    // Git compares whole seconds here, so a copy of the index dated even a microsecond later,
    // across the second's end, would make the edited entry look clean.
    const repo = await repoWith({ "value.txt": "old\n" });
    await run(repo, "config", "core.trustctime", "false");
    const second = 1_577_836_800;
    utimesSync(join(repo, "value.txt"), second, second);
    await run(repo, "update-index", "--refresh");
    write(repo, { "value.txt": "new\n" });
    utimesSync(join(repo, "value.txt"), second, second);
    utimesSync(join(repo, ".git", "index"), second + 0.9999995, second + 0.9999995);
    const clone = await build({ repo });
    expect(await look(clone.cloneDir, "show", "HEAD:value.txt")).toBe("new");
  });

  it("keeps what the target's index says of an entry git is told not to look at (assume-unchanged)", async () => {
    const repo = await repoWith({ "a.txt": "committed\n", "b.txt": "b\n" });
    await run(repo, "update-index", "--assume-unchanged", "a.txt");
    write(repo, { "a.txt": "edited but assumed unchanged\n", "b.txt": "edited\n" });
    const clone = await build({ repo });
    expect(await look(clone.cloneDir, "show", "HEAD:a.txt")).toBe("committed");
    expect(await look(clone.cloneDir, "show", "HEAD:b.txt")).toBe("edited");
  });

  it("neither signs the commit nor writes a shared index into the target, whatever the target's config says", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    await run(repo, "config", "commit.gpgsign", "true");
    await run(repo, "config", "gpg.program", "false");
    await run(repo, "config", "core.splitIndex", "true");
    write(repo, { "a.txt": "b\n" });
    const before = readdirSync(join(repo, ".git")).sort();
    const clone = await build({ repo });
    expect(await look(clone.cloneDir, "show", "HEAD:a.txt")).toBe("b");
    expect(readdirSync(join(repo, ".git")).sort()).toEqual(before);
  });

  it("links dependency roots, the defaults when none are named", async () => {
    const repo = await repoWith({ ".gitignore": "node_modules/\nextra/\n", "a.txt": "a\n" });
    write(repo, { "node_modules/d/i.js": "1\n", "extra/x": "x\n" });
    const defaults = await buildCleanClone({ repo, scratchDir: temp("cc-build-") });
    expect(defaults.linked).toEqual(["node_modules"]);
    expect(await look(defaults.cloneDir, "status", "--porcelain")).toBe("");
    expect((await build({ repo, links: ["extra"] })).linked).toEqual(["extra"]);
  });

  it("refuses what cannot survive the trip, naming the tree, before linking anything; allowed external symlinks are warnings", async () => {
    const repo = await repoWith({ ".gitignore": "node_modules/\n", "a.txt": "a\n" });
    write(repo, { "node_modules/d/i.js": "1\n" });
    symlinkSync("/etc/hosts", join(repo, "hosts"));
    const scratchDir = temp("cc-build-");
    const refused = await buildError({ repo, scratchDir, links: ["node_modules"] });
    expect(refused.step).toBe("refuse");
    expect(refused.tree).toMatch(/^[0-9a-f]{40}$/);
    expect(refused.detail).toMatch(/^the commit cannot be checked out as it stands here: the symlink hosts points to "\/etc\/hosts"/);
    expect(existsSync(join(scratchDir, "clone", "node_modules"))).toBe(false);
    const allowed = await build({ repo, allowExternalSymlinks: true, links: ["node_modules"] });
    expect(allowed.warnings).toEqual([
      expect.stringMatching(/^the symlink hosts points to "\/etc\/hosts", an absolute path outside the repository: .* \(allowed\)$/),
    ]);
    expect(allowed.linked).toEqual(["node_modules"]);
  });

  it("refuses a nested repository and a moved submodule pointer, and nothing a checkout carries", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    symlinkSync("/etc/hosts", join(repo, "gone"));
    await run(repo, "add", "gone");
    await run(repo, "commit", "-q", "-m", "an external link, deleted below");
    rmSync(join(repo, "gone"));
    const sub = join(repo, "sub");
    await run(repo, "init", "-q", sub);
    await run(sub, "commit", "-q", "--allow-empty", "-m", "one");
    await run(repo, "add", "sub");
    await run(repo, "commit", "-q", "-m", "add submodule");
    await run(sub, "commit", "-q", "--allow-empty", "-m", "two");
    const nested = join(repo, "nested");
    await run(repo, "init", "-q", nested);
    await run(nested, "commit", "-q", "--allow-empty", "-m", "nested");
    // Not refused: a symlink inside the repository, a deleted one, a file whose content looks like an absolute link.
    symlinkSync("a.txt", join(repo, "inside"));
    write(repo, { "abs.txt": "/etc/hosts" });
    const refused = await buildError({ repo });
    expect(refused.step).toBe("refuse");
    expect(refused.detail).toBe(
      "the commit cannot be checked out as it stands here: " +
        "nested is a nested git repository that is not a submodule: git add -A records it as a bare gitlink, so a checkout of the commit has an empty folder there (commit its files in the outer repository, or make it a submodule); " +
        "the change moves the submodule pointer sub; a clean clone has no submodule checkout to carry it",
    );
  });

  it("names the step that failed: the commit (a failing clean filter) and the clone (a scratch folder already used)", async () => {
    const repo = await repoWith({ ".gitattributes": "*.dat filter=broken\n", "a.dat": "one\n" });
    await run(repo, "config", "filter.broken.clean", "false");
    await run(repo, "config", "filter.broken.required", "true");
    write(repo, { "a.dat": "two\n" });
    const commit = await buildError({ repo });
    expect(commit.step).toBe("commit");
    expect(commit.message).toMatch(new RegExp(`^clean clone of ${repo} could not be built \\(commit\\): git .*a\\.dat: clean filter 'broken' failed`));

    const plain = await repoWith({ "a.txt": "a\n" });
    const scratchDir = temp("cc-build-");
    write(scratchDir, { "clone/occupied.txt": "x\n" });
    const clone = await buildError({ repo: plain, scratchDir });
    expect(clone.step).toBe("clone");
    expect(clone.detail).toMatch(/already exists and is not an empty directory/);
    // From a subfolder too: the folder the caller left in the scratch is not taken for an early clone's.
    write(plain, { "sub/b.txt": "b\n" });
    const fromSub = await buildError({ repo: join(plain, "sub"), scratchDir });
    expect(fromSub.step).toBe("clone");
    expect(fromSub.detail).toMatch(/already exists and is not an empty directory/);
    expect(readdirSync(join(scratchDir, "clone"))).toEqual(["occupied.txt"]);
  });
});
