import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gitResult, git, HARNESS_IDENTITY } from "../../../src/workspace/index.js";
import { eventually } from "../poll.js";
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
    const refused = (await create().catch((error: unknown) => error)) as {
      status: number;
      response: { headers: Record<string, string>; data: { message: string } };
    };
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

describe("fake GitHub: request gates", () => {
  it("holds matching requests unanswered until the gate opens, then serves them in order; others pass", async () => {
    const octokit = fakeOctokit(gh, { installation: true });
    const gate = gh.holdRequests({ method: "POST", path: /\/issues\/\d+\/comments$/ });
    const issue = gh.createIssue("octo-org", "flaky", { title: "Gated", body: "", user: "octo-org" });
    const answered: string[] = [];
    const post = (body: string) =>
      octokit.rest.issues.createComment({ owner: "octo-org", repo: "flaky", issue_number: issue.number, body }).then(() => answered.push(body));
    const first = post("first");
    const second = post("second");
    await eventually("both requests at the gate", () => (gate.waiting === 2 ? true : undefined));
    // Other requests pass while the gate holds these.
    expect((await octokit.rest.repos.get({ owner: "octo-org", repo: "flaky" })).status).toBe(200);
    expect(answered).toEqual([]);
    expect(gh.state.commentsOn("octo-org", "flaky", issue.number)).toEqual([]);
    gate.open();
    await Promise.all([first, second]);
    expect(gate.held).toBe(2);
    expect(gate.waiting).toBe(0);
    expect(gh.state.commentsOn("octo-org", "flaky", issue.number).map((comment) => comment.body)).toEqual(["first", "second"]);
    expect(gh.takeUnexpectedRequests()).toEqual([]);
  });
});
