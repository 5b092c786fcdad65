/**
 * Re-admission picks up the base: a story blocked because provisioning failed, the maintainer
 * fixes `.harness/provision.sh` on the default branch, `/harness retry-blocked` (a
 * `retry-blocked` job) merges the default branch into the story branch and the story completes
 * on the merged state. A merge that conflicts blocks as `base-conflict`, names the files and
 * leaves the story branch as it was. Real runner, real pipeline, real git, the fake GitHub.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JobLease, StoryJob } from "../../src/queue/index.js";
import { git, gitResult, HARNESS_IDENTITY } from "../../src/workspace/index.js";
import { type CheckRunRecord } from "../support/fake-github/index.js";
import { AGENT_SCRIPT, STATUS_MARKER } from "../e2e/scenario.js";
import { jest } from "@jest/globals";
import { recordingLog } from "./recording-log.js";
import { realRunner, storyLease } from "./real-runner.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

jest.setTimeout(180_000);

/** The scripted agent, no provisioning command: the ladder runs `.harness/provision.sh`. */
const HARNESS_YML = ["agent:", "  command: sh .harness-test/agent.sh", "test:", "  command: test -f feature.txt", "max_attempts: 1", ""].join("\n");
const BROKEN_PROVISION = "#!/bin/sh\necho 'the provisioning script is broken' >&2\nexit 1\n";
const FIXED_PROVISION = "#!/bin/sh\necho provisioned\n";

describe("re-admission merges the default branch first", () => {
  const fake = useFakeGitHub();
  let root: string;
  const { lines, log } = recordingLog();

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-readmit-"));
  });
  afterAll(async () => {
    rmSync(root, { recursive: true, force: true });
  });

  const worker = (home: string) => realRunner(fake, home, log);

  const lease = (name: string, number: number, repository: { id: number; cloneUrl: string }, kind: StoryJob["kind"]): JobLease =>
    storyLease(fake, { name, number, repository, kind, title: "Needs its dependencies" });

  /** Commits `files` on `branch` of the fake's repository, as a person pushing would; returns the new head. */
  const pushFiles = async (name: string, bareDir: string, branch: string, files: Record<string, string>, message: string): Promise<string> => {
    const clone = mkdtempSync(join(root, "clone-"));
    await git(["clone", "--quiet", "--branch", branch, bareDir, clone], { cwd: root });
    for (const [path, content] of Object.entries(files)) {
      writeFileSync(join(clone, path), content);
      if (path.endsWith(".sh")) chmodSync(join(clone, path), 0o755);
    }
    await git(["add", "-A"], { cwd: clone });
    await git(["commit", "--quiet", "-m", message], { cwd: clone, env: HARNESS_IDENTITY });
    await git(["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`], { cwd: clone });
    rmSync(clone, { recursive: true, force: true });
    return (await fake.branchHead("acme", name, branch))!;
  };

  const storyChecks = (name: string): CheckRunRecord[] => fake.state.checkRuns.filter((run) => run.repo === `acme/${name}` && run.name === "harness / story");
  const lastStoryCheck = (name: string): CheckRunRecord | undefined => storyChecks(name).at(-1);
  const isAncestor = async (bareDir: string, ancestor: string, descendant: string): Promise<boolean> =>
    (await gitResult(["merge-base", "--is-ancestor", ancestor, descendant], { cwd: bareDir, readOnly: true })).exitCode === 0;

  /** A repository whose provisioning is broken on main, and its story run once: blocked. */
  const blockedStory = async (name: string) => {
    const repo = await fake.addRepository({
      owner: "acme",
      name,
      files: {
        "README.md": `# ${name}\n`,
        ".github/harness.yml": HARNESS_YML,
        ".harness-test/agent.sh": AGENT_SCRIPT,
        ".harness/provision.sh": BROKEN_PROVISION,
      },
      executable: [".harness/provision.sh"],
    });
    const issue = fake.createIssue("acme", name, { title: "Needs its dependencies", body: "", user: "acme" });
    const home = join(root, `home-${name}`);
    await worker(home)(lease(name, issue.number, repo, "start"), new AbortController().signal);
    const blocked = lastStoryCheck(name);
    expect(blocked?.conclusion).toBe("action_required");
    expect(`${blocked?.output.summary}${blocked?.output.text}`).toContain("workspace-provision-failed");
    return { repo, number: issue.number, home, branch: `harness/story-${issue.number}` };
  };

  it("merges the fixed default branch into the story branch and completes the story on the merged state", async () => {
    const { repo, number, home, branch } = await blockedStory("fixed-on-main");
    const storyHead = (await fake.branchHead("acme", "fixed-on-main", branch))!;
    const fix = await pushFiles("fixed-on-main", repo.bareDir, "main", { ".harness/provision.sh": FIXED_PROVISION }, "Fix the provisioning script");

    await worker(home)(lease("fixed-on-main", number, repo, "retry-blocked"), new AbortController().signal);

    const done = lastStoryCheck("fixed-on-main");
    expect(done).toMatchObject({ status: "completed", conclusion: "success" });
    const head = (await fake.branchHead("acme", "fixed-on-main", branch))!;
    expect(done?.headSha).toBe(head);
    // The pushed work sits on a merge of the story branch as it was and the fixed main.
    expect(await isAncestor(repo.bareDir, fix, head)).toBe(true);
    expect(await isAncestor(repo.bareDir, storyHead, head)).toBe(true);
    const merges = (await git(["log", "--merges", "--format=%P%x09%s", head], { cwd: repo.bareDir, readOnly: true })).split("\n");
    expect(merges).toContainEqual(`${storyHead} ${fix}\tMerge main into ${branch}`);
    // The work was done on the merged state: the fixed script provisioned it.
    expect((await git(["show", `${head}:.harness/provision.sh`], { cwd: repo.bareDir, readOnly: true })).trim()).toBe(FIXED_PROVISION.trim());
    expect((await git(["show", `${head}:feature.txt`], { cwd: repo.bareDir, readOnly: true })).trim()).toBe("hello");
    expect(lines.some((line) => line.startsWith("info story branch brought up to date with the default branch") && line.includes(fix))).toBe(true);
    fake.assertNoUnexpectedRequests();
  });

  it("blocks as base-conflict naming the conflicting files, and leaves the story branch and its work as they were", async () => {
    const { repo, number, home, branch } = await blockedStory("conflicted");
    // Someone worked on the story branch, and main changed the same lines differently.
    const work = await pushFiles(
      "conflicted",
      repo.bareDir,
      branch,
      { "README.md": "# conflicted\n\nThe story's version.\n", "notes.txt": "work in progress\n" },
      "Work on the story",
    );
    await pushFiles(
      "conflicted",
      repo.bareDir,
      "main",
      { "README.md": "# conflicted\n\nMain's version.\n", ".harness/provision.sh": FIXED_PROVISION },
      "Main moves on",
    );
    const runsBefore = fake.state.checkRuns.filter((run) => run.repo === "acme/conflicted").length;

    await worker(home)(lease("conflicted", number, repo, "retry-blocked"), new AbortController().signal);

    const blocked = lastStoryCheck("conflicted");
    expect(blocked).toMatchObject({ status: "completed", conclusion: "action_required" });
    const text = `${blocked?.output.title}\n${blocked?.output.summary}\n${blocked?.output.text ?? ""}`;
    expect(text).toContain("base-conflict");
    expect(text).toContain("README.md");
    expect(text).not.toContain("notes.txt");
    expect(blocked?.actions.map((action) => action.identifier)).toEqual(["retry"]);
    expect(fake.state.checkRuns.filter((run) => run.repo === "acme/conflicted").length).toBeGreaterThan(runsBefore);
    const pull = fake.state.pulls.find((candidate) => candidate.repo === "acme/conflicted" && candidate.headRef === branch)!;
    const status = fake.state
      .commentsOn("acme", "conflicted", pull.number)
      .filter((comment) => comment.body.startsWith(STATUS_MARKER))
      .at(-1);
    expect(status?.body).toContain("base-conflict");
    expect(status?.body).toContain("README.md");
    // Nothing lost: the branch still holds exactly the work that was pushed to it.
    expect(await fake.branchHead("acme", "conflicted", branch)).toBe(work);
    expect(fake.state.issue(fake.state.repo("acme", "conflicted")!, number)?.labels).toContain("harness:blocked");
    expect(lines.some((line) => line.startsWith("error story stopped") && line.includes('"failureClass":"base-conflict"'))).toBe(true);
    fake.assertNoUnexpectedRequests();
  });
});
