/**
 * What a revision is asked to address, frozen when its trigger arrives: a review's body and
 * inline comments, another App's failing check runs (output, annotations, an Actions job's log
 * tail), and the signature that tells the same CI failure again from a new one.
 */
import { beforeAll, describe, expect, it } from "@jest/globals";
import { ACTIONS_APP_SLUG, CI_LOG_TAIL_BYTES, failureSignature, freezeReview, freezeSuite } from "../../src/github/triggers/feedback.js";
import { REDACTED } from "../../src/github/index.js";
import type { ForeignRunSpec } from "../support/fake-github/review-control.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { NAME, openStoryPull, OWNER, useTriggerSetup } from "./fake-setup.js";

const gh = useFakeGitHub();
const setup = useTriggerSetup(gh, { prefix: "harness-feedback-", permissions: { writer: "write" } });
const where = { owner: OWNER, repo: NAME };
const token = "ghp_" + "B".repeat(36);
let story: { number: number; headSha: string };

beforeAll(async () => {
  const issue = gh.createIssue(OWNER, NAME, { title: "Greet", body: "Add greet()", user: OWNER, labels: ["story"] });
  story = await openStoryPull(gh, setup.octokit, issue.number);
});

/** Another App's completed suite on the story's head, frozen as the check-suite trigger freezes it. */
async function frozenSuite(app: string, runs: ForeignRunSpec[]) {
  const { suite } = gh.addCheckSuite(OWNER, NAME, { app, headSha: story.headSha, headBranch: "harness/story-1", conclusion: "failure", runs });
  return freezeSuite(setup.octokit, where, { id: suite.id, app, headSha: story.headSha });
}

/** The requests made to `route` since `from` (an index into the fake's request log). */
function requestsTo(route: string, from: number): number {
  return gh.state.requests.slice(from).filter((request) => request.route === route).length;
}

describe("freezeReview", () => {
  it("keeps the body and the first 100 inline comments, each with its path, and its line only when the line is still in the diff", async () => {
    const comments = Array.from({ length: 101 }, (_, index) => ({
      path: `src/f${index}.js`,
      line: index === 1 ? 0 : index === 2 ? null : index + 1,
      body: `fix ${index}`,
    }));
    const { review } = gh.submitReview(OWNER, NAME, story.number, {
      user: "writer",
      state: "COMMENTED",
      body: "Overall fine",
      commitId: story.headSha,
      comments,
    });
    const frozen = await freezeReview(setup.octokit, { ...where, pullNumber: story.number }, { id: review.id, by: "writer", body: review.body });
    expect(frozen).toMatchObject({ kind: "review", by: "writer", id: review.id, body: "Overall fine" });
    expect(frozen.comments).toHaveLength(100);
    expect(frozen.comments[0]).toStrictEqual({ id: expect.any(Number), path: "src/f0.js", line: 1, body: "fix 0" });
    expect(frozen.comments[1]).toStrictEqual({ id: expect.any(Number), path: "src/f1.js", body: "fix 1" });
    expect(frozen.comments[2]).toStrictEqual({ id: expect.any(Number), path: "src/f2.js", body: "fix 2" });
    expect(frozen.comments.at(-1)?.path).toBe("src/f99.js");
  });

  it("strips ANSI codes and credentials from the body and the comments; a review without a body gives an empty one", async () => {
    const { review } = gh.submitReview(OWNER, NAME, story.number, {
      user: "writer",
      state: "CHANGES_REQUESTED",
      commitId: story.headSha,
      comments: [{ path: "a.js", line: 3, body: `\u001b[1mbold\u001b[0m and ${token}` }],
    });
    const where2 = { ...where, pullNumber: story.number };
    const frozen = await freezeReview(setup.octokit, where2, { id: review.id, by: "writer", body: `use \u001b[31m${token}\u001b[0m` });
    expect(frozen.body).toBe(`use ${REDACTED}`);
    expect(frozen.comments[0]?.body).toBe(`bold and ${REDACTED}`);
    expect((await freezeReview(setup.octokit, where2, { id: review.id, by: "writer", body: null })).body).toBe("");
  });
});

describe("freezeSuite", () => {
  it("keeps only the runs that failed (failure, timed_out, startup_failure) with their own conclusion, at most 20", async () => {
    const asked = ["failure", "success", "timed_out", "cancelled", "startup_failure", "neutral", "skipped", "action_required"];
    const frozen = await frozenSuite(
      "other-ci",
      asked.map((conclusion) => ({ name: `run-${conclusion}`, conclusion })),
    );
    expect(frozen).toMatchObject({ kind: "ci", app: "other-ci", headSha: story.headSha });
    expect(frozen.checks.map((check) => [check.name, check.conclusion])).toEqual([
      ["run-failure", "failure"],
      ["run-timed_out", "timed_out"],
      ["run-startup_failure", "startup_failure"],
    ]);
    const many = await frozenSuite(
      "other-ci",
      Array.from({ length: 22 }, (_, index) => ({ name: `job ${index}`, conclusion: "failure" })),
    );
    expect(many.checks.map((check) => check.name)).toEqual(Array.from({ length: 20 }, (_, index) => `job ${index}`));
  });

  it("joins the output's title, summary and text, skipping empty parts; reads annotations only when a run has some, failures and warnings only", async () => {
    const before = gh.state.requests.length;
    const frozen = await frozenSuite("other-ci", [
      {
        name: "test",
        conclusion: "failure",
        title: "2 failed",
        summary: "",
        text: `\u001b[31mdetails\u001b[0m ${token}`,
        annotations: [
          { path: "a.test.js", startLine: 4, endLine: 4, level: "failure", title: "greets", message: "expected hello" },
          { path: "b.js", startLine: 9, endLine: 9, level: "warning", title: null, message: "unused x" },
          { path: "c.js", startLine: 1, endLine: 1, level: "notice", title: null, message: "style" },
          { path: "d.js", startLine: 2, endLine: 2, level: "failure", title: null, message: "m".repeat(5000) },
        ],
      },
      { name: "lint", conclusion: "failure", summary: "1 error" },
    ]);
    const [test, lint] = frozen.checks;
    // Each annotation is kept to 4 KiB.
    const long = `d.js:2: ${"m".repeat(4096 - "d.js:2: ".length)}`;
    expect(test?.annotations.at(-1)).toBe(long);
    expect(test).toStrictEqual({
      name: "test",
      conclusion: "failure",
      summary: `2 failed\n\ndetails ${REDACTED}`,
      annotations: ["a.test.js:4: greets: expected hello", "b.js:9: unused x", long],
      signature: failureSignature("test", [`2 failed\n\ndetails ${REDACTED}`, "a.test.js:4: greets: expected hello", "b.js:9: unused x", long].join("\n")),
    });
    expect(lint).toStrictEqual({ name: "lint", conclusion: "failure", summary: "1 error", annotations: [], signature: failureSignature("lint", "1 error") });
    // One annotations request: the lint run reported none, so none was asked for; no job log for another App's runs.
    expect(requestsTo("/repos/{owner}/{repo}/check-runs/{check_run_id}/annotations", before)).toBe(1);
    expect(requestsTo("/repos/{owner}/{repo}/actions/jobs/{job_id}/logs", before)).toBe(0);
  });

  it("reads an Actions job's log, served directly or through a download, to its last 64 KiB, redacted, and signs the failure by it", async () => {
    const tail = `Error: \u001b[31mexpected hello\u001b[0m (${token}) é\n`;
    const log = "y".repeat(1023) + "\n";
    const text = log.repeat(100) + tail;
    const frozen = await frozenSuite(ACTIONS_APP_SLUG, [
      { name: "direct", conclusion: "failure", summary: "s", log: text, logInline: true },
      { name: "download", conclusion: "failure", summary: "s", log: Buffer.from(text) },
    ]);
    for (const check of frozen.checks) {
      const kept = check.log ?? "";
      expect(kept.endsWith(`Error: expected hello (${REDACTED}) é\n`)).toBe(true);
      expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(CI_LOG_TAIL_BYTES);
      // Cut once to 64 KiB, not to less: the log is 100 KiB, so the tail is (nearly) the whole budget.
      expect(Buffer.byteLength(kept)).toBeGreaterThan(CI_LOG_TAIL_BYTES - 1024);
      expect(check.signature).toBe(failureSignature(check.name, kept));
    }
  });

  it("keeps a run whose log GitHub will not give (gone, expired, forbidden) without one; another refusal fails the trigger", async () => {
    const withoutLog = await frozenSuite(ACTIONS_APP_SLUG, [{ name: "expired", conclusion: "failure", summary: "no log" }]);
    expect(withoutLog.checks[0]).toStrictEqual({
      name: "expired",
      conclusion: "failure",
      summary: "no log",
      annotations: [],
      signature: failureSignature("expired", "no log"),
    });
    for (const status of [403, 410]) {
      const window = gh.injectFailure({ path: /\/actions\/jobs\/\d+\/logs$/, failure: { kind: "refused", status, message: "Not now" } });
      const frozen = await frozenSuite(ACTIONS_APP_SLUG, [{ name: `refused ${status}`, conclusion: "failure", summary: "s", log: "a log" }]);
      window.close();
      expect(window.served).toBe(1);
      expect(frozen.checks[0]).not.toHaveProperty("log");
    }
    const window = gh.injectFailure({ path: /\/actions\/jobs\/\d+\/logs$/, failure: { kind: "refused", status: 500, message: "Server error" } });
    try {
      await expect(frozenSuite(ACTIONS_APP_SLUG, [{ name: "broken", conclusion: "failure", log: "a log" }])).rejects.toMatchObject({ status: 500 });
    } finally {
      window.close();
    }
  });
});

describe("failureSignature", () => {
  const sign = (text: string) => failureSignature("test", text);

  it("is 32 hex digits of the check's name and text, with the name kept apart from the text", () => {
    expect(sign("boom")).toMatch(/^[0-9a-f]{32}$/);
    expect(failureSignature("a", "bc")).not.toBe(failureSignature("ab", "c"));
    expect(sign("ab\nc")).not.toBe(sign("a\nbc"));
    expect(failureSignature("lint", "boom")).not.toBe(sign("boom"));
  });

  it("folds the timestamps at a line's start, hashes and numbers, and drops blank lines", () => {
    const first = "2026-12-01T10:00:00.1234567Z Error: 12 tests failed in 3.25s at commit 1a2b3c4d5e6f\n\n\n";
    const again = "  2027-01-02T23:59:59Z   Error: 3 tests failed in 7s at commit ABCDEF0123456789\n";
    expect(sign(first)).toBe(sign(again));
    expect(sign(first)).toBe(sign("Error: 1 tests failed in 1.5s at commit 0000000"));
    // A line that is only a time stamp, and spaces at a line's end, are nothing.
    expect(sign("2026-12-01T10:00:00Z\nError  \n")).toBe(sign("Error"));
    // Folded, not removed: a number or a hash still differs from none.
    expect(sign("took 3s")).not.toBe(sign("took s"));
    expect(sign("at commit 1234567abc")).not.toBe(sign("at commit"));
    // Only a leading timestamp is a time stamp; one in the message is part of the failure.
    expect(sign("expired at 2026-12-01T10:00:00Z")).not.toBe(sign("expired at"));
    // Hashes are runs of 7 or more hex digits: shorter words made of hex letters are words.
    expect(sign("bad")).not.toBe(sign("cab"));
    expect(sign("expected hello, got hi")).not.toBe(sign("expected hello, got yo"));
    expect(sign("took 12.5s")).toBe(sign("took 3s"));
    expect(sign("took 1.25s")).toBe(sign("took 3s"));
  });

  it("reads the last 20 non-blank lines only", () => {
    const lines = (changed: number) => Array.from({ length: 25 }, (_, index) => (index === changed ? "different" : `line ${"x".repeat(index)}`)).join("\n");
    expect(sign(lines(0))).toBe(sign(lines(-1)));
    expect(sign(lines(5))).not.toBe(sign(lines(-1)));
    expect(sign(lines(24))).not.toBe(sign(lines(-1)));
    expect(sign(`${lines(-1)}\n\n\n`)).toBe(sign(lines(-1)));
  });
});
