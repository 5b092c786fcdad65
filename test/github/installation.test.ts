import { ProbotOctokit } from "probot";
import { authenticateInstallation, gitAuthEnv, GIT_TOKEN_PERMISSIONS, STORY_API_PERMISSIONS, type AppOctokit } from "../../src/github/story/index.js";
import { git, gitResult } from "../../src/workspace/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

describe("installation authentication", () => {
  const fake = useFakeGitHub();
  beforeAll(async () => {
    await fake.addRepository({ owner: "acme", name: "tokens", files: { "README.md": "x\n" } });
  });
  afterAll(async () => {
    removeTempDirs();
  });

  it("creates the token through the App octokit's base URL and replaces it when it nears expiry", async () => {
    const appOctokit = new ProbotOctokit({ auth: { appId: fake.appId, privateKey: fake.privateKey }, baseUrl: fake.apiUrl }) as AppOctokit;
    let clock = Date.now();
    const installation = await authenticateInstallation(appOctokit, fake.installationId, { now: () => clock, throttle: false });
    const first = await installation.token();
    expect(fake.issuedTokens().map((issued) => issued.token)).toContain(first);
    const repo = await installation.octokit.rest.repos.get({ owner: "acme", repo: "tokens" });
    expect(repo.data.full_name).toBe("acme/tokens");
    expect(await installation.token()).toBe(first);

    clock += 2 * 60 * 60_000; // two hours later: the token has expired
    const second = await installation.token();
    expect(second).not.toBe(first);
    expect(installation.tokensSeen()).toEqual([first, second]);
    const lastAuth = fake.state.requests.filter((request) => request.path === "/api/v3/repos/acme/tokens").length;
    await installation.octokit.rest.repos.get({ owner: "acme", repo: "tokens" });
    expect(fake.state.requests.filter((request) => request.path === "/api/v3/repos/acme/tokens")).toHaveLength(lastAuth + 1);
    fake.assertNoUnexpectedRequests();
  });
});

describe("tokens scoped to the story", () => {
  const fake = useFakeGitHub();
  afterAll(async () => {
    removeTempDirs();
  });

  it("are minted for one repository with only the permissions asked for, and the fake holds them to it", async () => {
    const mine = await fake.addRepository({ owner: "acme", name: "mine", files: { "README.md": "x\n" } });
    await fake.addRepository({ owner: "acme", name: "theirs", files: { "README.md": "y\n" } });
    const appOctokit = new ProbotOctokit({ auth: { appId: fake.appId, privateKey: fake.privateKey }, baseUrl: fake.apiUrl }) as AppOctokit;
    const api = await authenticateInstallation(appOctokit, fake.installationId, {
      throttle: false,
      repositoryIds: [mine.id],
      permissions: STORY_API_PERMISSIONS,
    });
    const gitToken = await authenticateInstallation(appOctokit, fake.installationId, {
      throttle: false,
      repositoryIds: [mine.id],
      permissions: GIT_TOKEN_PERMISSIONS,
    });
    const issued = fake.issuedTokens();
    expect(issued.map((token) => [token.repositoryIds, token.permissions])).toEqual([
      [[mine.id], STORY_API_PERMISSIONS],
      [[mine.id], GIT_TOKEN_PERMISSIONS],
    ]);
    expect((await api.octokit.rest.repos.get({ owner: "acme", repo: "mine" })).data.full_name).toBe("acme/mine");
    fake.assertNoUnexpectedRequests();

    // Another repository of the same installation is out of the token's reach.
    await expect(api.octokit.rest.issues.listForRepo({ owner: "acme", repo: "theirs" })).rejects.toMatchObject({ status: 404 });
    // The git token cannot report; the API token cannot push.
    await expect(
      gitToken.octokit.rest.checks.create({ owner: "acme", repo: "mine", name: "x", head_sha: (await fake.branchHead("acme", "mine", "main"))! }),
    ).rejects.toMatchObject({ status: 403 });
    const clone = makeTempDir();
    await git(["clone", "-q", `${fake.url}/acme/mine.git`, clone], { cwd: clone, env: gitAuthEnv(await gitToken.token()) });
    const denied = await gitResult(["push", "-q", "origin", "HEAD:refs/heads/elsewhere"], { cwd: clone, env: gitAuthEnv(await api.token()) });
    expect(denied.exitCode).not.toBe(0);
    const theirs = await gitResult(["ls-remote", `${fake.url}/acme/theirs.git`], { cwd: clone, env: gitAuthEnv(await gitToken.token()) });
    expect(theirs.exitCode).not.toBe(0);
    expect(
      fake
        .takeUnexpectedRequests()
        .map((request) => request.status)
        .sort(),
    ).toEqual([403, 403, 404, 404]);
  });
});
