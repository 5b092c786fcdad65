import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gitResult, git, HARNESS_IDENTITY } from "../../../src/workspace/index.js";
import { DEFAULT_PUSH_REFUSAL, fakeOctokit, startFakeGitHub, type AddedRepository, type FakeGitHub } from "./index.js";

let gh: FakeGitHub;
let repo: AddedRepository;
let work: string;

beforeAll(async () => {
  gh = await startFakeGitHub();
  repo = await gh.addRepository({ owner: "octo-org", name: "flaky", files: { "README.md": "# flaky\n" } });
  work = await mkdtemp(join(tmpdir(), "fake-github-failures-"));
});

afterAll(async () => {
  await gh.close();
  await rm(work, { recursive: true, force: true });
});

describe("fake GitHub: failure windows", () => {
  it("answers a secondary rate limit (403 with retry-after) while the window is open, and normally once it is closed", async () => {
    const octokit = fakeOctokit(gh, { installation: true });
    const window = gh.injectFailure({ method: "POST", path: /\/check-runs$/, failure: { kind: "secondary-rate-limit", retryAfterSeconds: 7 } });
    const head = (await gh.branchHead("octo-org", "flaky", "main")) ?? "";
    const create = (): Promise<unknown> => octokit.rest.checks.create({ owner: "octo-org", repo: "flaky", name: "x", head_sha: head });
    const refused = (await create().catch((error: unknown) => error)) as { status: number; response: { headers: Record<string, string>; data: { message: string } } };
    expect(refused.status).toBe(403);
    expect(refused.response.headers["retry-after"]).toBe("7");
    expect(refused.response.data.message).toMatch(/secondary rate limit/);
    expect(window.served).toBe(1);
    // Other requests pass.
    expect((await octokit.rest.repos.get({ owner: "octo-org", repo: "flaky" })).status).toBe(200);
    window.close();
    expect(((await create()) as { status: number }).status).toBe(201);
    expect(window.served).toBe(1);
    expect(gh.takeUnexpectedRequests()).toEqual([]);
  });

  it("answers GraphQL with 502 while the window is open", async () => {
    const octokit = fakeOctokit(gh, { installation: true });
    const window = gh.injectFailure({ path: /^\/api\/graphql$/, failure: { kind: "bad-gateway" } });
    const failed = (await octokit.graphql("query { viewer { login } }").catch((error: unknown) => error)) as { status: number };
    expect(failed.status).toBe(502);
    window.close();
    expect(window.served).toBe(1);
  });

  it("refuses a push with GitHub's words (a pre-receive hook) while the window is open", async () => {
    const token = gh.mintToken();
    const clone = join(work, "clone");
    await git(["clone", "--quiet", repo.cloneUrl, clone], { cwd: work, env: gh.gitAuthEnv(token) });
    await writeFile(join(clone, "big.bin"), "pretend this is large\n");
    await git(["add", "big.bin"], { cwd: clone });
    await git(["commit", "-q", "-m", "big"], { cwd: clone, env: HARNESS_IDENTITY });
    const window = gh.injectFailure({ path: /\/flaky\.git\/git-receive-pack$/, failure: { kind: "push-refused" } });
    const refused = await gitResult(["push", "origin", "HEAD:refs/heads/feature"], { cwd: clone, env: gh.gitAuthEnv(token) });
    expect(refused.exitCode).not.toBe(0);
    expect(refused.tail).toContain("remote: GH001: Large files detected.");
    expect(refused.tail).toContain("pre-receive hook declined");
    expect(DEFAULT_PUSH_REFUSAL).toContain("GH001");
    expect(await gh.branchHead("octo-org", "flaky", "feature")).toBeNull();
    window.close();
    await git(["push", "--quiet", "origin", "HEAD:refs/heads/feature"], { cwd: clone, env: gh.gitAuthEnv(token) });
    expect(await gh.branchHead("octo-org", "flaky", "feature")).not.toBeNull();
    expect(gh.takeUnexpectedRequests()).toEqual([]);
  });
});
