import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { pushStoryBranch, repoCacheDir, syncRepoCache } from "../../src/runner/index.js";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";
import { looseIn17, makeReachable, writeLooseObjectsIn17 } from "../support/loose-objects.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

describe("repository cache", () => {
  const fake = useFakeGitHub();
  let root: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-runner-cache-"));
  });
  afterAll(async () => {
    rmSync(root, { recursive: true, force: true });
  });

  it("is made once over authenticated HTTPS, then refreshed with fetch, with no credential in .git/config", async () => {
    const repo = await fake.addRepository({ owner: "acme", name: "cache", files: { "README.md": "one\n" } });
    const token = fake.mintToken();
    const args = { harnessHome: join(root, "home"), owner: "acme", name: "cache", cloneUrl: repo.cloneUrl, authEnv: fake.gitAuthEnv(token) };
    const dir = await syncRepoCache(args);
    expect(dir).toBe(repoCacheDir(args.harnessHome, "acme", "cache"));
    const first = await git(["rev-parse", "refs/remotes/origin/main"], { cwd: dir, readOnly: true });
    writeFileSync(join(dir, "kept-between-syncs"), "");

    // A new commit on the remote arrives with the next sync, in the same folder.
    const work = join(root, "work");
    await git(["clone", "--quiet", repo.cloneUrl, work], { cwd: root, env: fake.gitAuthEnv(token) });
    writeFileSync(join(work, "README.md"), "two\n");
    await git(["commit", "--quiet", "-am", "two"], { cwd: work, env: HARNESS_IDENTITY });
    await git(["push", "--quiet", "origin", "HEAD:main"], { cwd: work, env: fake.gitAuthEnv(token) });
    expect(await syncRepoCache(args)).toBe(dir);
    expect(existsSync(join(dir, "kept-between-syncs"))).toBe(true);
    const second = await git(["rev-parse", "refs/remotes/origin/main"], { cwd: dir, readOnly: true });
    expect(second).not.toBe(first);
    expect(second).toBe(await fake.branchHead("acme", "cache", "main"));

    const config = readFileSync(join(dir, "config"), "utf8");
    expect(config).toContain(repo.cloneUrl);
    expect(config).not.toContain(token);
    expect(config).not.toContain(Buffer.from(`x-access-token:${token}`).toString("base64"));
  });

  it("runs no hook planted in the cache during the App's fetch and push, which carry the token in git's environment", async () => {
    const repo = await fake.addRepository({ owner: "acme", name: "hooked", files: { "README.md": "one\n" } });
    const token = fake.mintToken();
    const args = { harnessHome: join(root, "home"), owner: "acme", name: "hooked", cloneUrl: repo.cloneUrl, authEnv: fake.gitAuthEnv(token) };
    const dir = await syncRepoCache(args);
    const ran = join(root, "hooked-ran");
    mkdirSync(join(dir, "hooks"), { recursive: true });
    for (const hook of ["reference-transaction", "pre-push", "post-checkout", "pre-auto-gc", "fsmonitor-watchman"]) {
      writeFileSync(join(dir, "hooks", hook), `#!/bin/sh\necho ${hook} >> "${ran}"\nenv >> "${ran}"\ncat > /dev/null\n`);
      chmodSync(join(dir, "hooks", hook), 0o755);
    }
    // The remote moves on, so the next fetch updates refs (which is what fires reference-transaction).
    const work = join(root, "hooked-work");
    await git(["clone", "--quiet", repo.cloneUrl, work], { cwd: root, env: fake.gitAuthEnv(token) });
    writeFileSync(join(work, "README.md"), "two\n");
    await git(["commit", "--quiet", "-am", "two"], { cwd: work, env: HARNESS_IDENTITY });
    await git(["push", "--quiet", "origin", "HEAD:main"], { cwd: work, env: fake.gitAuthEnv(token) });

    await syncRepoCache(args);
    const tip = await git(["rev-parse", "refs/remotes/origin/main"], { cwd: dir, readOnly: true });
    expect(tip).toBe(await fake.branchHead("acme", "hooked", "main"));
    await pushStoryBranch({ repoDir: dir, branch: "harness/story-1", sha: tip, authEnv: args.authEnv });
    expect(await fake.branchHead("acme", "hooked", "harness/story-1")).toBe(tip);
    // Git moved the cache's tracking ref of the pushed branch itself (the cache's fetch refspec maps it).
    expect(await git(["rev-parse", "refs/remotes/origin/harness/story-1"], { cwd: dir, readOnly: true })).toBe(tip);
    expect(existsSync(ran)).toBe(false);

    // The fixture is live: the same push by git without the harness's flags runs the hooks, token and all.
    const plain = await exec(["git", "push", "--quiet", "origin", `${tip}:refs/heads/harness/story-2`], { cwd: dir, env: { set: args.authEnv } });
    expect(plain.exitCode).toBe(0);
    const leaked = readFileSync(ran, "utf8");
    expect(leaked).toContain("pre-push");
    expect(leaked).toContain("reference-transaction");
    expect(leaked).toContain(Buffer.from(`x-access-token:${token}`).toString("base64"));
  });

  it("sets the remote URL again when the repository's clone URL changed, and after a fetch that failed", async () => {
    const repo = await fake.addRepository({ owner: "acme", name: "moved", files: { "README.md": "one\n" } });
    const args = { harnessHome: join(root, "home"), owner: "acme", name: "moved", cloneUrl: repo.cloneUrl, authEnv: fake.gitAuthEnv(fake.mintToken()) };
    const dir = await syncRepoCache(args);
    const gone = "http://127.0.0.1:1/acme/moved.git";
    await expect(syncRepoCache({ ...args, cloneUrl: gone })).rejects.toThrow();
    expect(readFileSync(join(dir, "config"), "utf8")).toContain(gone);
    // The URL that fetched last is not trusted after that failure: it is set again, and the fetch works.
    expect(await syncRepoCache(args)).toBe(dir);
    expect(readFileSync(join(dir, "config"), "utf8")).toContain(repo.cloneUrl);
    expect(readFileSync(join(dir, "config"), "utf8")).not.toContain(gone);
    expect(await git(["rev-parse", "refs/remotes/origin/main"], { cwd: dir, readOnly: true })).toBe(await fake.branchHead("acme", "moved", "main"));
  });

  it("makes a cache whose configuration was lost again, though this process had set its URL and fetched", async () => {
    const repo = await fake.addRepository({ owner: "acme", name: "damaged", files: { "README.md": "one\n" } });
    const args = { harnessHome: join(root, "home"), owner: "acme", name: "damaged", cloneUrl: repo.cloneUrl, authEnv: fake.gitAuthEnv(fake.mintToken()) };
    const dir = await syncRepoCache(args);
    writeFileSync(join(dir, "config"), "[core]\n\tbare = true\n");
    // The fetch of the URL this process set fails, not for GitHub's reasons: the cache is checked and made again.
    expect(await syncRepoCache(args)).toBe(dir);
    expect(readFileSync(join(dir, "config"), "utf8")).toContain(repo.cloneUrl);
    expect(await git(["rev-parse", "refs/remotes/origin/main"], { cwd: dir, readOnly: true })).toBe(await fake.branchHead("acme", "damaged", "main"));
  });

  it("fetches only the branches it is told of: the default branch, and the story's when it was pushed", async () => {
    const repo = await fake.addRepository({ owner: "acme", name: "many", files: { "README.md": "one\n" } });
    const token = fake.mintToken();
    const args = { harnessHome: join(root, "home"), owner: "acme", name: "many", cloneUrl: repo.cloneUrl, authEnv: fake.gitAuthEnv(token) };
    const work = join(root, "many-work");
    await git(["clone", "--quiet", repo.cloneUrl, work], { cwd: root, env: fake.gitAuthEnv(token) });
    for (const branch of ["other", "harness/story-5", "harness/story-6"])
      await git(["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`], { cwd: work, env: fake.gitAuthEnv(token) });
    const refs = async (dir: string): Promise<string[]> =>
      (await git(["for-each-ref", "--format=%(refname)", "refs/remotes/origin"], { cwd: dir, readOnly: true })).split("\n").filter(Boolean).sort();

    // A story whose branch the remote does not have yet: the default branch only, and no error.
    const dir = await syncRepoCache({ ...args, branches: { exact: "main", prefix: "harness/story-7" } });
    expect(await refs(dir)).toEqual(["refs/remotes/origin/main"]);
    // A story whose branch is there: it, but not the other story's or the other branch.
    await syncRepoCache({ ...args, branches: { exact: "main", prefix: "harness/story-5" } });
    expect(await refs(dir)).toEqual(["refs/remotes/origin/harness/story-5", "refs/remotes/origin/main"]);
    // Removed on the remote: pruned from the cache.
    await git(["push", "--quiet", "origin", ":refs/heads/harness/story-5"], { cwd: work, env: fake.gitAuthEnv(token) });
    await syncRepoCache({ ...args, branches: { exact: "main", prefix: "harness/story-5" } });
    expect(await refs(dir)).toEqual(["refs/remotes/origin/main"]);
    // Told nothing: every branch, as before.
    await syncRepoCache(args);
    expect(await refs(dir)).toContain("refs/remotes/origin/other");
  });

  it("skips the fetch only when GitHub's tips are exactly the cache's, names and ids: a moved, new or removed branch is fetched", async () => {
    const repo = await fake.addRepository({ owner: "acme", name: "tips", files: { "README.md": "one\n" } });
    const token = fake.mintToken();
    const branches = { exact: "main", prefix: "harness/story-3" };
    const args = { harnessHome: join(root, "home"), owner: "acme", name: "tips", cloneUrl: repo.cloneUrl, authEnv: fake.gitAuthEnv(token), branches };
    const work = join(root, "tips-work");
    await git(["clone", "--quiet", repo.cloneUrl, work], { cwd: root, env: fake.gitAuthEnv(token) });
    const push = (spec: string): Promise<string> => git(["push", "--quiet", "origin", spec], { cwd: work, env: fake.gitAuthEnv(token) });
    /** The remote's tips of the story's branches, as GitHub's matching-refs and ref answers report them. */
    const tips = async (): Promise<Map<string, string>> => {
      const listed = await git(["for-each-ref", "--format=%(refname:strip=2) %(objectname)", "refs/heads/"], { cwd: repo.bareDir, readOnly: true });
      return new Map(
        listed
          .split("\n")
          .map((line) => line.split(" ") as [string, string])
          .filter(([name]) => name === "main" || name.startsWith(branches.prefix)),
      );
    };
    const fetches = (): number => fake.state.requests.filter((request) => request.path === "/acme/tips.git/git-upload-pack").length;
    const remoteRefs = async (dir: string): Promise<string> =>
      git(
        [
          "for-each-ref",
          "--format=%(refname) %(objectname)",
          "refs/remotes/origin/main",
          "refs/remotes/origin/harness/story-3*",
          "refs/remotes/origin/harness/story-3*/**",
        ],
        { cwd: dir, readOnly: true },
      );

    // A new cache is fetched whatever GitHub says.
    const dir = await syncRepoCache({ ...args, remoteTips: await tips() });
    let fetched = fetches();
    expect(fetched).toBeGreaterThan(0);
    // Refs the story's fetch does not touch are no concern of its comparison: a local branch, another story's.
    const main = await git(["rev-parse", "refs/remotes/origin/main"], { cwd: dir, readOnly: true });
    for (const ref of ["refs/heads/harness/story-3", "refs/remotes/origin/harness/story-4"]) await git(["update-ref", ref, main], { cwd: dir });
    // Nothing moved: no fetch.
    await syncRepoCache({ ...args, remoteTips: await tips() });
    expect(fetches()).toBe(fetched);
    const same = await remoteRefs(dir);

    // Each change is fetched, and leaves the cache as a fetch always did.
    const moveStory = async (): Promise<string> => {
      await git(["commit", "--quiet", "--allow-empty", "-m", "moved"], { cwd: work, env: HARNESS_IDENTITY });
      return push("HEAD:refs/heads/harness/story-3");
    };
    const changes = [
      "HEAD:refs/heads/harness/story-3",
      moveStory,
      "HEAD:refs/heads/harness/story-30/task",
      ":refs/heads/harness/story-3",
      ":refs/heads/harness/story-30/task",
      "HEAD:refs/heads/main",
    ];
    for (const change of changes) {
      await (typeof change === "string" ? push(change) : change());
      await syncRepoCache({ ...args, remoteTips: await tips() });
      expect(fetches()).toBeGreaterThan(fetched);
      fetched = fetches();
      const expected = [...(await tips())].map(([name, sha]) => `refs/remotes/origin/${name} ${sha}`).sort();
      expect((await remoteRefs(dir)).split("\n").sort()).toEqual(expected);
      // Asked again with nothing moved since: no fetch.
      await syncRepoCache({ ...args, remoteTips: await tips() });
      expect(fetches()).toBe(fetched);
    }
    expect(await remoteRefs(dir)).not.toBe(same);
    // Another story's branch is no concern of this one's; no answer from GitHub fetches as before.
    await push("HEAD:refs/heads/harness/story-4");
    await syncRepoCache({ ...args, remoteTips: await tips() });
    expect(fetches()).toBe(fetched);
    // Told no branches (every branch is fetched), the tips do not say what a fetch would change.
    const { branches: _told, ...everyBranch } = args;
    await syncRepoCache({ ...everyBranch, remoteTips: await tips() });
    expect(fetches()).toBeGreaterThan(fetched);
    fetched = fetches();
    await syncRepoCache(args);
    expect(fetches()).toBeGreaterThan(fetched);
  });

  it("is refused without a token: the fake's git endpoint requires one", async () => {
    const repo = await fake.addRepository({ owner: "acme", name: "locked", files: { "README.md": "x\n" } });
    await expect(syncRepoCache({ harnessHome: join(root, "home"), owner: "acme", name: "locked", cloneUrl: repo.cloneUrl, authEnv: {} })).rejects.toMatchObject(
      { kind: "auth" },
    );
  });

  it("fetches without git's automatic gc, even where the cache's config asks for it, and runs its own gc once due", async () => {
    const repo = await fake.addRepository({ owner: "acme", name: "kept", files: { "README.md": "x\n" } });
    const args = { harnessHome: join(root, "home"), owner: "acme", name: "kept", cloneUrl: repo.cloneUrl, authEnv: fake.gitAuthEnv(fake.mintToken()) };
    const dir = await syncRepoCache(args);
    await git(["config", "gc.auto", "1"], { cwd: dir });
    await git(["config", "gc.autoDetach", "false"], { cwd: dir });
    const objects = join(dir, "objects");
    await makeReachable(dir, writeLooseObjectsIn17(objects, 3), "refs/harness/few");
    await syncRepoCache(args);
    // git's own auto gc (gc.auto=1) would have packed them; the App's waits for git's default limit.
    expect(looseIn17(objects)).toBe(3);
    await makeReachable(dir, writeLooseObjectsIn17(objects, 28, "more"), "refs/harness/kept");
    await syncRepoCache(args);
    expect(looseIn17(objects)).toBe(0);
  });

  it("refuses owner or name parts that would leave the cache folder", () => {
    expect(() => repoCacheDir("/data", "..", "x")).toThrow(/invalid repository name part/);
    expect(() => repoCacheDir("/data", "a", "b/c")).toThrow(/invalid repository name part/);
  });
});
