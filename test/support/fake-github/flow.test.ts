import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { git, HARNESS_IDENTITY } from "../../../src/workspace/index.js";
import { fakeOctokit } from "./client.js";
import { startFakeGitHub, type FakeGitHub } from "./index.js";

const OWNER = "octo-org";
const NAME = "shop";
let gh: FakeGitHub;
let work: string;

beforeAll(async () => {
  gh = await startFakeGitHub({ validateResponses: true });
  await gh.addRepository({ owner: OWNER, name: NAME, files: { "package.json": "{}\n" } });
  work = await mkdtemp(join(tmpdir(), "fake-github-flow-"));
});

afterAll(async () => {
  await gh.close();
  await rm(work, { recursive: true, force: true });
});

afterEach(() => {
  // Every test leaves the fake clean; one that provokes refusals takes them itself.
  expect(gh.takeUnexpectedRequests()).toEqual([]);
});

/** Pushes `harness/story-<n>` with one empty commit, as the runner does at the start of a story. */
async function pushStoryBranch(issueNumber: number): Promise<string> {
  const token = gh.mintToken();
  const clone = join(work, `clone-${issueNumber}`);
  await git(["clone", "--quiet", `${gh.url}/${OWNER}/${NAME}.git`, clone], { cwd: work, env: gh.gitAuthEnv(token) });
  await git(["commit", "--quiet", "--allow-empty", "-m", "Start story"], { cwd: clone, env: HARNESS_IDENTITY });
  await git(["push", "--quiet", "origin", `HEAD:refs/heads/harness/story-${issueNumber}`], { cwd: clone, env: gh.gitAuthEnv(token) });
  return git(["rev-parse", "HEAD"], { cwd: clone });
}

describe("fake GitHub: the routes a story uses", () => {
  it("issues, reactions, comments (edited in place, paginated), labels", async () => {
    const octokit = fakeOctokit(gh, { installation: true });
    const issue = gh.createIssue(OWNER, NAME, { title: "Add a cart", body: "As a shopper…", user: "alice", labels: ["story"] });
    const got = await octokit.rest.issues.get({ owner: OWNER, repo: NAME, issue_number: issue.number });
    expect(got.data).toMatchObject({
      number: issue.number,
      title: "Add a cart",
      user: { login: "alice", type: "User" },
      labels: [{ name: "story" }],
      state: "open",
    });
    expect(got.data.pull_request).toBeUndefined();

    expect((await octokit.rest.reactions.createForIssue({ owner: OWNER, repo: NAME, issue_number: issue.number, content: "eyes" })).status).toBe(201);
    expect((await octokit.rest.reactions.createForIssue({ owner: OWNER, repo: NAME, issue_number: issue.number, content: "eyes" })).status).toBe(200);
    expect(gh.state.reactions).toEqual([expect.objectContaining({ content: "eyes", user: gh.botLogin, issueNumber: issue.number })]);

    const posted = await octokit.rest.issues.createComment({ owner: OWNER, repo: NAME, issue_number: issue.number, body: "<!-- status -->\nfirst" });
    expect(posted.data.user?.login).toBe(gh.botLogin);
    await octokit.rest.issues.updateComment({ owner: OWNER, repo: NAME, comment_id: posted.data.id, body: "<!-- status -->\nsecond" });
    for (let index = 0; index < 4; index += 1) gh.addComment(OWNER, NAME, issue.number, { body: `note ${index}`, user: "bob" });
    const all = await octokit.paginate(octokit.rest.issues.listComments, { owner: OWNER, repo: NAME, issue_number: issue.number, per_page: 2 });
    expect(all.map((comment) => comment.body)).toEqual(["<!-- status -->\nsecond", "note 0", "note 1", "note 2", "note 3"]);
    expect(gh.state.comments.find((comment) => comment.id === posted.data.id)?.history).toEqual(["<!-- status -->\nfirst", "<!-- status -->\nsecond"]);

    await expect(octokit.rest.issues.getLabel({ owner: OWNER, repo: NAME, name: "harness:blocked" })).rejects.toMatchObject({ status: 404 });
    await octokit.rest.issues.createLabel({ owner: OWNER, repo: NAME, name: "harness:blocked", color: "b60205", description: "Blocked" });
    await expect(octokit.rest.issues.createLabel({ owner: OWNER, repo: NAME, name: "harness:blocked", color: "b60205" })).rejects.toMatchObject({
      status: 422,
    });
    await octokit.rest.issues.addLabels({ owner: OWNER, repo: NAME, issue_number: issue.number, labels: ["harness:blocked"] });
    const labels = await octokit.rest.issues.listLabelsOnIssue({ owner: OWNER, repo: NAME, issue_number: issue.number });
    expect(labels.data.map((label) => label.name)).toEqual(["story", "harness:blocked"]);
    await octokit.rest.issues.removeLabel({ owner: OWNER, repo: NAME, issue_number: issue.number, name: "harness:blocked" });
    await expect(octokit.rest.issues.removeLabel({ owner: OWNER, repo: NAME, issue_number: issue.number, name: "harness:blocked" })).rejects.toMatchObject({
      status: 404,
    });
    expect(gh.state.labelsOn(OWNER, NAME, issue.number)).toEqual(["story"]);
    expect(gh.state.commentsOn(OWNER, NAME, issue.number).map((comment) => comment.user)).toEqual([gh.botLogin, "bob", "bob", "bob", "bob"]);
  });

  it("draft pull request from a pushed branch, found by head, marked ready through GraphQL, with check runs on its head", async () => {
    const octokit = fakeOctokit(gh, { installation: true });
    const issue = gh.createIssue(OWNER, NAME, { title: "Checkout", user: "alice" });
    const branch = `harness/story-${issue.number}`;
    await expect(octokit.rest.pulls.create({ owner: OWNER, repo: NAME, title: "x", head: branch, base: "main" })).rejects.toMatchObject({ status: 422 });
    const head = await pushStoryBranch(issue.number);

    const created = await octokit.rest.pulls.create({
      owner: OWNER,
      repo: NAME,
      title: `Story #${issue.number}: Checkout`,
      head: branch,
      base: "main",
      body: `Closes #${issue.number}`,
      draft: true,
    });
    expect(created.data).toMatchObject({ draft: true, state: "open", head: { ref: branch, sha: head }, base: { ref: "main" }, user: { login: gh.botLogin } });
    await expect(octokit.rest.pulls.create({ owner: OWNER, repo: NAME, title: "again", head: branch, base: "main" })).rejects.toMatchObject({ status: 422 });
    const found = await octokit.rest.pulls.list({ owner: OWNER, repo: NAME, head: `${OWNER}:${branch}`, state: "open" });
    expect(found.data.map((pull) => pull.number)).toEqual([created.data.number]);
    expect((await octokit.rest.issues.get({ owner: OWNER, repo: NAME, issue_number: created.data.number })).data.pull_request).toBeDefined();

    const run = await octokit.rest.checks.create({
      owner: OWNER,
      repo: NAME,
      name: "harness / story",
      head_sha: head,
      status: "in_progress",
      output: { title: "Running", summary: "attempt 1" },
    });
    await octokit.rest.checks.update({
      owner: OWNER,
      repo: NAME,
      check_run_id: run.data.id,
      conclusion: "failure",
      output: { title: "Blocked", summary: "workspace-provision-failed" },
      actions: [{ label: "Retry", description: "Re-admit the blocked story", identifier: "retry-blocked" }],
    });
    const listed = await octokit.rest.checks.listForRef({ owner: OWNER, repo: NAME, ref: branch, check_name: "harness / story" });
    expect(listed.data.total_count).toBe(1);
    expect(listed.data.check_runs[0]).toMatchObject({ status: "completed", conclusion: "failure", output: { title: "Blocked" } });
    const record = gh.state.checkRuns.find((candidate) => candidate.id === run.data.id);
    expect(record?.actions).toEqual([expect.objectContaining({ identifier: "retry-blocked" })]);
    expect(record?.history.map((body) => body.status ?? body.conclusion)).toEqual(["in_progress", "failure"]);
    await expect(octokit.rest.checks.create({ owner: OWNER, repo: NAME, name: "x", head_sha: "0".repeat(40) })).rejects.toMatchObject({ status: 422 });
    expect(gh.takeUnexpectedRequests()).toHaveLength(1);

    await octokit.graphql(`mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }`, {
      id: created.data.node_id,
    });
    const ready = await octokit.rest.pulls.get({ owner: OWNER, repo: NAME, pull_number: created.data.number });
    expect(ready.data.draft).toBe(false);
    expect(gh.state.findPull(OWNER, NAME, branch)?.history.at(-1)).toEqual({ graphql: "markPullRequestReadyForReview" });
    expect(gh.state.checkRunsOf(OWNER, NAME, { name: "harness / story", headSha: head }).map((candidate) => candidate.id)).toEqual([run.data.id]);
    await octokit.graphql(`mutation { convertPullRequestToDraft(input: { pullRequestId: "${created.data.node_id}" }) { pullRequest { isDraft } } }`);
    expect(gh.state.findPull(OWNER, NAME, created.data.number)?.draft).toBe(true);
    await expect(octokit.graphql(`query { viewer { login } }`)).rejects.toThrow();
    expect(gh.takeUnexpectedRequests()[0]?.reason).toMatch(/GraphQL/);
  });

  it("reports collaborator permissions as GitHub does (maintain counts as write, triage as read)", async () => {
    const octokit = fakeOctokit(gh, { installation: true });
    gh.setPermission(OWNER, NAME, "writer", "write");
    gh.setPermission(OWNER, NAME, "keeper", "maintain");
    gh.setPermission(OWNER, NAME, "sorter", "triage");
    const level = async (username: string): Promise<[string, string | undefined]> => {
      const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner: OWNER, repo: NAME, username });
      return [data.permission, data.role_name];
    };
    expect(await level("writer")).toEqual(["write", "write"]);
    expect(await level("keeper")).toEqual(["write", "maintain"]);
    expect(await level("sorter")).toEqual(["read", "triage"]);
    expect(await level(OWNER)).toEqual(["admin", "admin"]);
    expect(await level("stranger")).toEqual(["none", "none"]);
  });
});
