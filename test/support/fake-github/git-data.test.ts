import { git, HARNESS_IDENTITY } from "../../../src/workspace/index.js";
import { fakeOctokit } from "./client.js";
import { startFakeGitHub, type AddedRepository, type FakeGitHub } from "./index.js";

const OWNER = "octo-org";
const NAME = "data";
const SIGNATURE = { name: "story-harness", email: "story-harness@users.noreply.github.com", date: "2026-02-03T04:05:06Z" };

let gh: FakeGitHub;
let repo: AddedRepository;
let main: string;
let tree: string;

beforeAll(async () => {
  gh = await startFakeGitHub({ validateResponses: true });
  repo = await gh.addRepository({ owner: OWNER, name: NAME, files: { "README.md": "# data\n" } });
  main = (await gh.branchHead(OWNER, NAME, "main")) ?? "";
  tree = await git(["rev-parse", `${main}^{tree}`], { cwd: repo.bareDir });
});

afterAll(async () => {
  await gh.close();
});

afterEach(() => {
  expect(gh.takeUnexpectedRequests()).toEqual([]);
});

/** The status GitHub answered a call with, and its message. */
async function refusal(promise: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await promise;
    return { status: 200, message: "" };
  } catch (error) {
    const failed = error as { status: number; response?: { data?: { message?: string } } };
    return { status: failed.status, message: failed.response?.data?.message ?? "" };
  }
}

/** `git commit-tree` with the same fields, as the runner makes the start commit in its cache. */
function commitTree(message: string): Promise<string> {
  const date = `@${Date.parse(SIGNATURE.date) / 1000} +0000`;
  return git(["commit-tree", tree, "-p", main], {
    cwd: repo.bareDir,
    input: message,
    env: { ...HARNESS_IDENTITY, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
  });
}

describe("fake GitHub: the Git data API", () => {
  const octokit = () => fakeOctokit(gh, { installation: true });

  it("makes a commit with exactly the given fields: the id git commit-tree makes of them", async () => {
    const message = "Story #1: start\n\nStarted by story-harness.\n";
    const { data, status } = await octokit().rest.git.createCommit({
      owner: OWNER,
      repo: NAME,
      message,
      tree,
      parents: [main],
      author: SIGNATURE,
      committer: SIGNATURE,
    });
    expect(status).toBe(201);
    expect(data.sha).toBe(await commitTree(message));
    expect(data).toMatchObject({ message, tree: { sha: tree }, parents: [{ sha: main }], author: SIGNATURE, verification: { verified: false } });
    expect(await git(["cat-file", "-t", data.sha], { cwd: repo.bareDir })).toBe("commit");
  });

  it("refuses an unknown tree or parent (422)", async () => {
    const unknown = "1".repeat(40);
    expect(await refusal(octokit().rest.git.createCommit({ owner: OWNER, repo: NAME, message: "x", tree: unknown, parents: [main] }))).toEqual({
      status: 422,
      message: "Tree SHA does not exist",
    });
    expect(await refusal(octokit().rest.git.createCommit({ owner: OWNER, repo: NAME, message: "x", tree, parents: [unknown] }))).toEqual({
      status: 422,
      message: "Parent SHA does not exist or is not a commit object",
    });
    // A tree is no parent.
    expect((await refusal(octokit().rest.git.createCommit({ owner: OWNER, repo: NAME, message: "x", tree, parents: [tree] }))).status).toBe(422);
  });

  it("makes a ref once: an existing one or an unknown id is a 422", async () => {
    const made = await octokit().rest.git.createRef({ owner: OWNER, repo: NAME, ref: "refs/heads/harness/story-7", sha: main });
    expect(made.status).toBe(201);
    expect(made.data).toMatchObject({ ref: "refs/heads/harness/story-7", object: { type: "commit", sha: main } });
    expect(await gh.branchHead(OWNER, NAME, "harness/story-7")).toBe(main);
    expect(await refusal(octokit().rest.git.createRef({ owner: OWNER, repo: NAME, ref: "refs/heads/harness/story-7", sha: main }))).toEqual({
      status: 422,
      message: "Reference already exists",
    });
    expect(await refusal(octokit().rest.git.createRef({ owner: OWNER, repo: NAME, ref: "refs/heads/other", sha: "2".repeat(40) }))).toEqual({
      status: 422,
      message: "Object does not exist",
    });
    expect((await refusal(octokit().rest.git.createRef({ owner: OWNER, repo: NAME, ref: "heads/nope", sha: main }))).status).toBe(422);
    expect(await gh.branchHead(OWNER, NAME, "other")).toBeNull();
  });

  it("lists the refs a name begins (matching-refs, a prefix match) and reads one ref exactly", async () => {
    for (const branch of ["harness/story-8", "harness/story-8-a", "harness/story-80/task-a", "harness/story-9"]) {
      await git(["update-ref", `refs/heads/${branch}`, main], { cwd: repo.bareDir });
    }
    const { data } = await octokit().rest.git.listMatchingRefs({ owner: OWNER, repo: NAME, ref: "heads/harness/story-8" });
    expect(data.map((ref) => ref.ref).sort()).toEqual(["refs/heads/harness/story-8", "refs/heads/harness/story-8-a", "refs/heads/harness/story-80/task-a"]);
    expect((await octokit().rest.git.listMatchingRefs({ owner: OWNER, repo: NAME, ref: "heads/harness/story-5" })).data).toEqual([]);
    const one = await octokit().rest.git.getRef({ owner: OWNER, repo: NAME, ref: "heads/main" });
    expect(one.data).toMatchObject({ ref: "refs/heads/main", object: { type: "commit", sha: main } });
    expect((await refusal(octokit().rest.git.getRef({ owner: OWNER, repo: NAME, ref: "heads/harness" }))).status).toBe(404);
  });

  it("signs API commits in the signed-commits mode: the id then differs from the caller's own", async () => {
    const message = "Signed\n";
    const window = gh.injectFailure({ method: "POST", path: /\/git\/commits$/, failure: { kind: "signed-commits" } });
    const { data } = await octokit().rest.git.createCommit({
      owner: OWNER,
      repo: NAME,
      message,
      tree,
      parents: [main],
      author: SIGNATURE,
      committer: SIGNATURE,
    });
    window.close();
    expect(window.served).toBe(1);
    expect(data.sha).not.toBe(await commitTree(message));
    expect(data.verification).toMatchObject({ verified: true, reason: "valid" });
    expect(await git(["cat-file", "commit", data.sha], { cwd: repo.bareDir })).toContain("gpgsig -----BEGIN PGP SIGNATURE-----");
  });

  it("needs contents: write to make commits and refs", async () => {
    const token = gh.issuedTokens().length; // a read-only token: what the runner reports with
    const { data } = await fakeOctokit(gh).rest.apps.createInstallationAccessToken({ installation_id: gh.installationId, permissions: { contents: "read" } });
    expect(gh.issuedTokens().length).toBe(token + 1);
    const reader = fakeOctokit(gh, { token: data.token });
    expect((await reader.rest.git.getRef({ owner: OWNER, repo: NAME, ref: "heads/main" })).status).toBe(200);
    expect((await refusal(reader.rest.git.createRef({ owner: OWNER, repo: NAME, ref: "refs/heads/read-only", sha: main }))).status).toBe(403);
    expect(gh.takeUnexpectedRequests().map((request) => request.status)).toEqual([403]);
  });
});
