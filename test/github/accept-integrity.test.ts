/**
 * `/harness accept-integrity`: a writer re-admits a blocked story with the test-integrity gate's
 * findings accepted in their name; a reader cannot, and the job it would queue carries nothing.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BLOCKED_LABEL } from "../../src/github/index.js";
import { handleIssueComment, type TriggerDeps } from "../../src/github/triggers/index.js";
import { EmbeddedQueue } from "../../src/queue/index.js";
import { schemas } from "../../src/schema/index.js";
import { fakeOctokit } from "../support/fake-github/client.js";
import { issueCommentCreatedPayload } from "../support/fake-github/index.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { contextFor, NAME, openStoryPull, OWNER, RecordingLog } from "./fake-setup.js";

const gh = useFakeGitHub();
let queue: EmbeddedQueue;
let queueDir: string;
let deps: TriggerDeps;
let octokit: ReturnType<typeof fakeOctokit>;

beforeAll(async () => {
  await gh.addRepository({ owner: OWNER, name: NAME, files: { "README.md": "# demo\n" } });
  gh.setPermission(OWNER, NAME, "maintainer", "maintain");
  gh.setPermission(OWNER, NAME, "reader", "read");
  octokit = fakeOctokit(gh, { installation: true });
});

beforeEach(async () => {
  queueDir = mkdtempSync(join(tmpdir(), "harness-accept-queue-"));
  queue = await EmbeddedQueue.open({ dir: queueDir });
  deps = { queue, log: new RecordingLog(), appSlug: gh.appSlug, appId: gh.appId, now: () => new Date("2026-02-03T04:05:06.000Z") };
});

afterEach(async () => {
  await queue.close();
  rmSync(queueDir, { recursive: true, force: true });
  gh.assertNoUnexpectedRequests();
});

const commentsOn = (number: number): string[] => gh.state.comments.filter((comment) => comment.issueNumber === number).map((comment) => comment.body);

function commented(number: number, body: string, user: string) {
  const comment = gh.addComment(OWNER, NAME, number, { body, user });
  return contextFor("issue_comment.created", issueCommentCreatedPayload(gh, { owner: OWNER, name: NAME, comment }), octokit);
}

describe("/harness accept-integrity", () => {
  it("re-admits a blocked story from its pull request with the findings accepted by the writer, and refuses a reader", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Drop the legacy suite", body: "b", user: "maintainer", labels: ["story", BLOCKED_LABEL] });
    const pull = await openStoryPull(gh, octokit, issue.number);

    expect(await handleIssueComment(commented(pull.number, "/harness accept-integrity", "reader"), deps)).toEqual({
      action: "replied",
      reason: "not-permitted",
    });
    expect(commentsOn(pull.number).at(-1)).toMatch(/^@reader only people with write/);
    expect(await queue.isActive(`${OWNER}/${NAME}#${issue.number}`)).toBe(false);

    const outcome = await handleIssueComment(commented(pull.number, "The legacy tests go with the feature.\n\n/harness accept-integrity", "maintainer"), deps);
    expect(outcome).toMatchObject({
      action: "enqueued",
      job: { kind: "retry-blocked", acceptIntegrity: true, requestedBy: "maintainer", pullNumber: pull.number, issue: { number: issue.number } },
    });
    if (outcome.action === "enqueued") expect(schemas().issues("queue-story-job", outcome.job)).toEqual([]);
    expect(commentsOn(pull.number).at(-1)).toBe(
      `Re-admitting story #${issue.number} in a fresh worktree, with the test-integrity findings accepted by @maintainer.`,
    );
  });

  it("is listed by /harness help, and a plain retry-blocked accepts nothing", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Another", body: "b", user: "maintainer", labels: ["story", BLOCKED_LABEL] });
    const pull = await openStoryPull(gh, octokit, issue.number);
    await handleIssueComment(commented(pull.number, "/harness help", "maintainer"), deps);
    expect(commentsOn(pull.number).at(-1)).toContain(
      "- `/harness accept-integrity`: re-admit a blocked story with the test-integrity gate's findings accepted in your name",
    );
    const outcome = await handleIssueComment(commented(pull.number, "/harness retry-blocked", "maintainer"), deps);
    expect(outcome).toMatchObject({ action: "enqueued" });
    if (outcome.action === "enqueued") expect(outcome.job.acceptIntegrity).toBeUndefined();
  });
});
