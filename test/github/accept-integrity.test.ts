/**
 * `/harness accept-integrity`: a writer re-admits a blocked story with the test-integrity gate's
 * findings accepted in their name; a reader cannot, and the job it would queue carries nothing.
 */
import { describe, expect, it } from "@jest/globals";
import { BLOCKED_LABEL } from "../../src/github/index.js";
import { handleIssueComment } from "../../src/github/triggers/index.js";
import { schemas } from "../../src/schema/index.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { NAME, openStoryPull, OWNER, useTriggerSetup } from "./fake-setup.js";

const gh = useFakeGitHub();
const setup = useTriggerSetup(gh, {
  prefix: "harness-accept-queue-",
  permissions: { maintainer: "maintain", reader: "read" },
  now: () => new Date("2026-02-03T04:05:06.000Z"),
});

describe("/harness accept-integrity", () => {
  it("re-admits a blocked story from its pull request with the findings accepted by the writer, and refuses a reader", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Drop the legacy suite", body: "b", user: "maintainer", labels: ["story", BLOCKED_LABEL] });
    const pull = await openStoryPull(gh, setup.octokit, issue.number);

    expect(await handleIssueComment(setup.commented(pull.number, "/harness accept-integrity", "reader"), setup.deps)).toEqual({
      action: "replied",
      reason: "not-permitted",
    });
    expect(setup.commentsOn(pull.number).at(-1)).toMatch(/^@reader only people with write/);
    expect(await setup.queue.isActive(`${OWNER}/${NAME}#${issue.number}`)).toBe(false);

    const outcome = await handleIssueComment(
      setup.commented(pull.number, "The legacy tests go with the feature.\n\n/harness accept-integrity", "maintainer"),
      setup.deps,
    );
    expect(outcome).toMatchObject({
      action: "enqueued",
      job: { kind: "retry-blocked", acceptIntegrity: true, requestedBy: "maintainer", pullNumber: pull.number, issue: { number: issue.number } },
    });
    if (outcome.action === "enqueued") expect(schemas().issues("queue-story-job", outcome.job)).toEqual([]);
    expect(setup.commentsOn(pull.number).at(-1)).toBe(
      `Re-admitting story #${issue.number} in a fresh worktree, with the test-integrity findings accepted by @maintainer.`,
    );
  });

  it("is listed by /harness help, and a plain retry-blocked accepts nothing", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Another", body: "b", user: "maintainer", labels: ["story", BLOCKED_LABEL] });
    const pull = await openStoryPull(gh, setup.octokit, issue.number);
    await handleIssueComment(setup.commented(pull.number, "/harness help", "maintainer"), setup.deps);
    expect(setup.commentsOn(pull.number).at(-1)).toContain(
      "- `/harness accept-integrity`: re-admit a blocked story with the test-integrity gate's findings accepted in your name",
    );
    const outcome = await handleIssueComment(setup.commented(pull.number, "/harness retry-blocked", "maintainer"), setup.deps);
    expect(outcome).toMatchObject({ action: "enqueued" });
    if (outcome.action === "enqueued") expect(outcome.job.acceptIntegrity).toBeUndefined();
  });
});
