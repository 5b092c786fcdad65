import { createPrivateKey, createSign } from "node:crypto";
import { gzipSync } from "node:zlib";
import { generateAppKey } from "./auth.js";
import { fakeOctokit } from "./client.js";
import { startFakeGitHub, UnexpectedRequestsError, type FakeGitHub } from "./index.js";

const OWNER = "octo-org";
const NAME = "demo";
const HARNESS_YML = "test:\n  command: npm test\nmax_attempts: 2\n";

let gh: FakeGitHub;
let mainSha: string;

beforeAll(async () => {
  gh = await startFakeGitHub({ validateResponses: true });
  await gh.addRepository({ owner: OWNER, name: NAME, files: { "README.md": "# demo\n", ".github/harness.yml": HARNESS_YML } });
  mainSha = (await gh.branchHead(OWNER, NAME, "main")) ?? "";
});

afterAll(async () => {
  await gh.close();
});

afterEach(() => {
  // Every test leaves the fake clean; one that provokes refusals takes them itself.
  expect(gh.takeUnexpectedRequests()).toEqual([]);
});

/** A JWT signed with some key, for the refusal cases. */
function jwt(privateKeyPem: string, claims: Record<string, unknown>): string {
  const header = Buffer.from(JSON.stringify({ alg: "RS256", typ: "JWT" })).toString("base64url");
  const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
  const signature = createSign("RSA-SHA256").update(`${header}.${payload}`).sign(createPrivateKey(privateKeyPem)).toString("base64url");
  return `${header}.${payload}.${signature}`;
}

async function status(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    return (error as { status: number }).status;
  }
}

describe("fake GitHub: authentication", () => {
  it("issues an installation token for a real RS256 JWT and accepts it on REST routes", async () => {
    const app = fakeOctokit(gh);
    expect((await app.rest.apps.getAuthenticated()).data).toMatchObject({ id: gh.appId, slug: gh.appSlug });
    const { data } = await app.rest.apps.createInstallationAccessToken({ installation_id: gh.installationId });
    expect(data.token).toMatch(/^ghs_/);
    expect(new Date(data.expires_at).getTime()).toBeGreaterThan(Date.now());
    expect(gh.issuedTokens().map((issued) => issued.token)).toContain(data.token);
    const repo = await fakeOctokit(gh, { token: data.token }).rest.repos.get({ owner: OWNER, repo: NAME });
    expect(repo.data).toMatchObject({ full_name: `${OWNER}/${NAME}`, default_branch: "main", clone_url: `${gh.url}/${OWNER}/${NAME}.git` });
  });

  it("lets Probot's installation auth fetch its own token through the base URL", async () => {
    const before = gh.issuedTokens().length;
    const installation = fakeOctokit(gh, { installation: true });
    expect((await installation.rest.repos.get({ owner: OWNER, repo: NAME })).status).toBe(200);
    expect(gh.issuedTokens().length).toBe(before + 1);
  });

  it("refuses a JWT signed with another key, an expired JWT, a missing or expired token with 401", async () => {
    const otherKey = generateAppKey().privateKeyPem;
    const now = Math.floor(Date.now() / 1000);
    const forged = jwt(otherKey, { iss: gh.appId, iat: now - 30, exp: now + 500 });
    const expired = jwt(gh.privateKey, { iss: gh.appId, iat: now - 700, exp: now - 100 });
    expect(await status(fakeOctokit(gh, { token: forged }).rest.apps.getAuthenticated())).toBe(401);
    expect(await status(fakeOctokit(gh, { token: expired }).rest.apps.getAuthenticated())).toBe(401);
    expect(await status(fetch(`${gh.apiUrl}/repos/${OWNER}/${NAME}`).then(assertOk))).toBe(401);
    const token = gh.mintToken();
    gh.expireToken(token);
    expect(await status(fakeOctokit(gh, { token }).rest.repos.get({ owner: OWNER, repo: NAME }))).toBe(401);
    // An installation token is no App JWT.
    expect(await status(fakeOctokit(gh, { token: gh.mintToken() }).rest.apps.getAuthenticated())).toBe(401);
    const refused = gh.takeUnexpectedRequests();
    expect(refused.map((request) => request.status)).toEqual([401, 401, 401, 401, 401]);
  });
});

async function assertOk(response: Response): Promise<void> {
  if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
}

describe("fake GitHub: strictness", () => {
  it("answers a valid body and refuses one that fails GitHub's OpenAPI schema with 422, recorded", async () => {
    const octokit = fakeOctokit(gh, { token: gh.mintToken() });
    const created = await octokit.rest.checks.create({ owner: OWNER, repo: NAME, name: "harness / story", head_sha: mainSha, status: "queued" });
    expect(created.status).toBe(201);
    // Sent without Octokit, whose types would not let a wrong body through.
    const bad = await fetch(`${gh.apiUrl}/repos/${OWNER}/${NAME}/check-runs`, {
      method: "POST",
      headers: { authorization: `token ${gh.mintToken()}`, "content-type": "application/json" },
      body: JSON.stringify({ name: 42, head_sha: mainSha, status: "bogus" }),
    });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { message: string }).message).toMatch(/^Invalid request\./);
    const refused = gh.takeUnexpectedRequests();
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ method: "POST", path: `/api/v3/repos/${OWNER}/${NAME}/check-runs`, status: 422 });
    expect(refused[0]?.reason).toMatch(/'name'.*string/);
    expect(refused[0]?.reason).toMatch(/'status'/);
    expect(gh.state.requests.at(-1)).toMatchObject({ status: 422, route: "/repos/{owner}/{repo}/check-runs" });
  });

  it("fails assertNoUnexpectedRequests, listing them, after a request to a route it does not serve", async () => {
    const octokit = fakeOctokit(gh, { token: gh.mintToken() });
    await expect(octokit.request("GET /repos/{owner}/{repo}/branches", { owner: OWNER, repo: NAME })).rejects.toMatchObject({ status: 404 });
    expect(() => gh.assertNoUnexpectedRequests()).toThrow(UnexpectedRequestsError);
    expect(() => gh.assertNoUnexpectedRequests()).toThrow(/GET \/api\/v3\/repos\/octo-org\/demo\/branches → 404/);
    gh.takeUnexpectedRequests();
  });

  it("refuses a check run summary over 65,535 bytes of UTF-8 even under 65,535 characters, and keeps the run unchanged", async () => {
    const octokit = fakeOctokit(gh, { token: gh.mintToken() });
    const run = await octokit.rest.checks.create({ owner: OWNER, repo: NAME, name: "harness / verifier", head_sha: mainSha, status: "in_progress" });
    const multibyte = "é".repeat(40_000); // 40,000 characters, 80,000 bytes
    const update = octokit.rest.checks.update({ owner: OWNER, repo: NAME, check_run_id: run.data.id, output: { title: "t", summary: multibyte } });
    await expect(update).rejects.toMatchObject({ status: 422 });
    expect(gh.takeUnexpectedRequests()[0]?.reason).toMatch(/65535/);
    const exact = "a".repeat(65_535);
    await octokit.rest.checks.update({ owner: OWNER, repo: NAME, check_run_id: run.data.id, conclusion: "success", output: { title: "t", summary: exact } });
    const record = gh.state.checkRuns.find((candidate) => candidate.id === run.data.id);
    expect(record).toMatchObject({ status: "completed", conclusion: "success" });
    expect(record?.output.summary).toHaveLength(65_535);
    expect(record?.history).toHaveLength(2);
  });

  it("reads a gzip-encoded JSON body", async () => {
    const response = await fetch(`${gh.apiUrl}/repos/${OWNER}/${NAME}/check-runs`, {
      method: "POST",
      headers: { authorization: `token ${gh.mintToken()}`, "content-type": "application/json", "content-encoding": "gzip" },
      body: gzipSync(JSON.stringify({ name: "gzipped", head_sha: mainSha })),
    });
    expect(response.status).toBe(201);
  });
});

describe("fake GitHub: contents", () => {
  it("serves a file of the default branch as base64 JSON and raw, and what Probot's config reads", async () => {
    const octokit = fakeOctokit(gh, { token: gh.mintToken() });
    const { data } = await octokit.rest.repos.getContent({ owner: OWNER, repo: NAME, path: ".github/harness.yml" });
    expect(data).toMatchObject({ type: "file", encoding: "base64", path: ".github/harness.yml" });
    expect(Buffer.from((data as { content: string }).content, "base64").toString("utf8")).toBe(HARNESS_YML);
    const config = await octokit.config.get({ owner: OWNER, repo: NAME, path: ".github/harness.yml" });
    expect(config.config).toEqual({ test: { command: "npm test" }, max_attempts: 2 });
  });

  it("answers 404 for a missing file, and Probot's config falls back to defaults without anything unexpected", async () => {
    const octokit = fakeOctokit(gh, { token: gh.mintToken() });
    await expect(octokit.rest.repos.getContent({ owner: OWNER, repo: NAME, path: "missing.txt" })).rejects.toMatchObject({ status: 404 });
    const config = await octokit.config.get({ owner: OWNER, repo: NAME, path: ".github/absent.yml", defaults: { a: 1 } });
    expect(config.config).toEqual({ a: 1 });
  });
});
