import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { git, GitError, HARNESS_IDENTITY } from "../../../src/workspace/index.js";
import { startFakeGitHub, type AddedRepository, type FakeGitHub } from "./index.js";

let gh: FakeGitHub;
let repo: AddedRepository;
let work: string;

beforeAll(async () => {
  gh = await startFakeGitHub();
  repo = await gh.addRepository({
    owner: "octo-org",
    name: "tool",
    defaultBranch: "trunk",
    files: { "README.md": "# tool\n", ".harness/provision.sh": "#!/bin/sh\necho ok\n" },
    executable: [".harness/provision.sh"],
  });
  work = await mkdtemp(join(tmpdir(), "fake-github-git-"));
});

afterAll(async () => {
  await gh.close();
  await rm(work, { recursive: true, force: true });
});

afterEach(() => {
  // Every test leaves the fake clean; one that provokes refusals takes them itself.
  expect(gh.takeUnexpectedRequests()).toEqual([]);
});

describe("fake GitHub: git smart HTTP", () => {
  it("clones and pushes with an installation token passed through GIT_CONFIG_*, never into .git/config", async () => {
    const token = gh.mintToken();
    const clone = join(work, "clone");
    await git(["clone", "--quiet", repo.cloneUrl, clone], { cwd: work, env: gh.gitAuthEnv(token) });
    expect(await readFile(join(clone, "README.md"), "utf8")).toBe("# tool\n");
    expect((await stat(join(clone, ".harness/provision.sh"))).mode & 0o111).not.toBe(0);
    expect(await git(["rev-parse", "--abbrev-ref", "HEAD"], { cwd: clone })).toBe("trunk");

    await git(["checkout", "--quiet", "-b", "harness/story-1"], { cwd: clone });
    // Incompressible enough that git streams the push in chunks.
    const bytes = Buffer.alloc(2_000_000);
    for (let index = 0; index < bytes.length; index += 1) bytes[index] = (index * 2654435761) >>> 24;
    await writeFile(join(clone, "data.bin"), bytes);
    await git(["add", "-A"], { cwd: clone });
    await git(["commit", "--quiet", "-m", "Story work"], { cwd: clone, env: HARNESS_IDENTITY });
    await git(["push", "--quiet", "origin", "HEAD"], { cwd: clone, env: gh.gitAuthEnv(token) });

    expect(await gh.branchHead("octo-org", "tool", "harness/story-1")).toBe(await git(["rev-parse", "HEAD"], { cwd: clone }));
    expect(await readFile(join(clone, ".git", "config"), "utf8")).not.toContain(token);
    const gitRequests = gh.state.requests.filter((request) => request.route === "git");
    expect(gitRequests.map((request) => `${request.method} ${request.status}`)).toEqual(expect.arrayContaining(["POST 200", "GET 200"]));
  });

  it("fetches what was pushed into a second clone", async () => {
    const token = gh.mintToken();
    const second = join(work, "second");
    await git(["clone", "--quiet", "--branch", "harness/story-1", repo.cloneUrl, second], { cwd: work, env: gh.gitAuthEnv(token) });
    expect((await stat(join(second, "data.bin"))).size).toBe(2_000_000);
  });

  it("serves a fetch whose negotiation git sends gzip-encoded", async () => {
    const token = gh.mintToken();
    const clone = join(work, "clone");
    // Many local commits make git list many "have" lines, which it gzips past 1 KiB.
    for (let index = 0; index < 60; index += 1) {
      await git(["commit", "--quiet", "--allow-empty", "-m", `local ${index}`], { cwd: clone, env: HARNESS_IDENTITY });
    }
    const second = join(work, "second");
    await git(["commit", "--quiet", "--allow-empty", "-m", "remote work"], { cwd: second, env: HARNESS_IDENTITY });
    await git(["push", "--quiet", "origin", "HEAD:refs/heads/remote-work"], { cwd: second, env: gh.gitAuthEnv(token) });
    await git(["fetch", "--quiet", "origin", "remote-work"], { cwd: clone, env: gh.gitAuthEnv(token) });
    expect(await git(["rev-parse", "FETCH_HEAD"], { cwd: clone })).toBe(await gh.branchHead("octo-org", "tool", "remote-work"));
    const fetches = gh.state.requests.filter((request) => request.route === "git" && request.path.endsWith("/git-upload-pack"));
    expect(fetches.map((request) => `${request.contentEncoding ?? "identity"} ${request.status}`)).toContain("gzip 200");
  });

  it("refuses clone and push without a token, or with an expired one, with 401 and WWW-Authenticate: Basic", async () => {
    await expect(git(["clone", "--quiet", repo.cloneUrl, join(work, "anonymous")], { cwd: work })).rejects.toMatchObject({ kind: "auth" });
    const expired = gh.mintToken();
    gh.expireToken(expired);
    await expect(git(["clone", "--quiet", repo.cloneUrl, join(work, "expired")], { cwd: work, env: gh.gitAuthEnv(expired) })).rejects.toBeInstanceOf(GitError);
    const clone = join(work, "clone");
    await expect(git(["push", "--quiet", "origin", "HEAD:refs/heads/sneaky"], { cwd: clone })).rejects.toMatchObject({ kind: "auth" });
    expect(await gh.branchHead("octo-org", "tool", "sneaky")).toBeNull();

    const response = await fetch(`${repo.cloneUrl}/info/refs?service=git-upload-pack`);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Basic/);
  });

  it("runs no automatic gc after a push, even where the repository's own config asks for one", async () => {
    const token = gh.mintToken();
    const clone = join(work, "clone");
    await git(["config", "gc.auto", "1"], { cwd: repo.bareDir });
    await git(["config", "gc.autoDetach", "false"], { cwd: repo.bareDir });
    try {
      const packsBefore = (await readdir(join(repo.bareDir, "objects", "pack"))).filter((name) => name.endsWith(".pack"));
      await writeFile(join(clone, "gc.txt"), "no gc\n");
      await git(["add", "gc.txt"], { cwd: clone });
      await git(["commit", "--quiet", "-m", "A few loose objects"], { cwd: clone, env: HARNESS_IDENTITY });
      await git(["push", "--quiet", "origin", "HEAD:refs/heads/no-gc"], { cwd: clone, env: gh.gitAuthEnv(token) });
      const head = await gh.branchHead("octo-org", "tool", "no-gc");
      expect(head).toBe(await git(["rev-parse", "HEAD"], { cwd: clone }));
      // receive-pack unpacked the few objects it got; its `gc --auto` (gc.auto=1) would have packed them.
      await expect(stat(join(repo.bareDir, "objects", (head ?? "").slice(0, 2), (head ?? "").slice(2)))).resolves.toBeDefined();
      expect((await readdir(join(repo.bareDir, "objects", "pack"))).filter((name) => name.endsWith(".pack"))).toEqual(packsBefore);
    } finally {
      await git(["config", "--unset", "gc.auto"], { cwd: repo.bareDir });
      await git(["config", "--unset", "gc.autoDetach"], { cwd: repo.bareDir });
    }
  });

  it("answers 404 for a repository it does not have", async () => {
    const basic = Buffer.from(`x-access-token:${gh.mintToken()}`).toString("base64");
    const response = await fetch(`${gh.url}/octo-org/nope.git/info/refs?service=git-upload-pack`, { headers: { authorization: `Basic ${basic}` } });
    expect(response.status).toBe(404);
  });
});
