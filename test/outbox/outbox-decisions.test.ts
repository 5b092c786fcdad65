/**
 * The outbox's pure decisions, case by case: when a refused write is tried again (retryVerdict),
 * what a finally refused push does to the reports that waited behind it (afterRefusedPush), and
 * what becomes of an entry an earlier process left (recoverEntry).
 */
import { describe, expect, it } from "@jest/globals";
import { identityOf, selfIdentity } from "../../src/exec/index.js";
import { BLOCKED_LABEL } from "../../src/github/index.js";
import { afterRefusedPush } from "../../src/outbox/gate.js";
import { recoverEntry } from "../../src/outbox/recover.js";
import { DEFAULT_RETRY_POLICY, retryVerdict, type OutboxEntry, type OutboxWrite, type PushWrite } from "../../src/outbox/index.js";

const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000, maxAttempts: 10 };
const HOUR = 60 * 60_000;

function refusal(status: number | undefined, headers: Record<string, string> = {}, message = "refused"): unknown {
  return { ...(status !== undefined ? { status } : {}), message, response: { headers } };
}

describe("retryVerdict", () => {
  it.each([
    ["retry-after on a 403", refusal(403, { "retry-after": "7" }), 1, 7000],
    ["retry-after on a 429", refusal(429, { "retry-after": "3" }), 1, 3000],
    ["a retry-after of 0", refusal(429, { "retry-after": "0" }), 1, 0],
    ["a retry-after beyond an hour, held to an hour", refusal(429, { "retry-after": "999999" }), 1, HOUR],
    ["a negative retry-after, ignored for the backoff", refusal(429, { "retry-after": "-5" }), 3, 400],
    ["a retry-after on a 5xx, which is no rate limit", refusal(503, { "retry-after": "7" }), 2, 200],
    ["a 429 without hints", refusal(429), 1, 100],
    ["a 401 (a token expired in between)", refusal(401), 2, 200],
    ["a 500", refusal(500), 1, 100],
    ["the backoff, held to its longest", refusal(502), 8, 1000],
    ["a lost connection", new Error("socket hang up"), 4, 800],
  ])("tries again after %s", (_case, error, attempt, afterMs) => {
    expect(retryVerdict(error, attempt, policy)).toEqual({ retry: true, afterMs, why: expect.any(String) as unknown });
  });

  it("waits for a rate limit's reset when none is left, from the time given, never a negative wait", () => {
    const now = 1_000_000;
    const spent = (status: number, reset: string): unknown => refusal(status, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset });
    expect(retryVerdict(spent(403, "1010"), 1, policy, now)).toMatchObject({ retry: true, afterMs: 10_000 });
    expect(retryVerdict(spent(429, "1010"), 1, policy, now)).toMatchObject({ retry: true, afterMs: 10_000 });
    expect(retryVerdict(spent(403, "900"), 1, policy, now)).toMatchObject({ retry: true, afterMs: 0 });
    expect(retryVerdict(spent(403, "99999999"), 1, policy, now)).toMatchObject({ retry: true, afterMs: HOUR });
    // No reset to wait for: the backoff.
    expect(retryVerdict(refusal(403, { "x-ratelimit-remaining": "0" }), 3, policy, now)).toMatchObject({ retry: true, afterMs: 400 });
    // Requests left: a plain 403, refused for good.
    expect(retryVerdict(refusal(403, { "x-ratelimit-remaining": "1", "x-ratelimit-reset": "1010" }), 1, policy, now)).toMatchObject({ retry: false });
  });

  it("waits at least a minute after a secondary rate limit, in any case of its words", () => {
    expect(retryVerdict(refusal(403, {}, "You have exceeded a secondary rate limit"), 1, policy)).toMatchObject({ retry: true, afterMs: 60_000 });
    expect(retryVerdict(refusal(429, {}, "Secondary Rate Limit hit"), 1, policy)).toMatchObject({ retry: true, afterMs: 60_000 });
    expect(retryVerdict(refusal(403, {}, "abuse detection mechanism"), 1, policy)).toMatchObject({ retry: true, afterMs: 60_000 });
    const slow = { ...policy, baseDelayMs: 50_000, maxDelayMs: 10 * 60_000 };
    expect(retryVerdict(refusal(403, {}, "secondary rate limit"), 2, slow)).toMatchObject({ retry: true, afterMs: 100_000 });
  });

  it.each([
    ["a 400", refusal(400)],
    ["a plain 403", refusal(403)],
    ["a 404", refusal(404)],
    ["a 410", refusal(410)],
    ["a 422", refusal(422)],
    ["GraphQL's NOT_FOUND", { errors: [{ type: "FORBIDDEN" }, { type: "NOT_FOUND", message: "gone" }], message: "gone" }],
  ])("gives up at once on %s", (_case, error) => {
    expect(retryVerdict(error, 1, policy)).toEqual({ retry: false, why: expect.any(String) as unknown });
  });

  it("reads a rate limit's headers and words only on a 403 or a 429, and a status only when it is a number", () => {
    const now = 1_000_000;
    expect(retryVerdict(refusal(500, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "2000" }), 2, policy, now)).toMatchObject({
      retry: true,
      afterMs: 200,
    });
    expect(retryVerdict(refusal(500, {}, "secondary rate limit"), 2, policy)).toMatchObject({ retry: true, afterMs: 200 });
    expect(retryVerdict({ status: "404", message: "odd" }, 1, policy)).toEqual({ retry: true, afterMs: 100, why: "no status: odd" });
  });

  it("tries again on GraphQL errors that are not NOT_FOUND", () => {
    expect(retryVerdict({ errors: [{ type: "RATE_LIMITED" }], message: "later" }, 1, policy)).toMatchObject({ retry: true, afterMs: 100 });
  });

  it("gives up after the last attempt the policy allows, not before", () => {
    expect(retryVerdict(refusal(502), 9, policy)).toMatchObject({ retry: true });
    expect(retryVerdict(refusal(502), 10, policy)).toEqual({ retry: false, why: "gave up after 10 attempts; last 502: refused" });
    // Even a rate limit's hint does not outlast the bound.
    expect(retryVerdict(refusal(429, { "retry-after": "1" }), 10, policy)).toMatchObject({ retry: false });
  });

  it("takes a deliverer's final refusal in its own words, whatever the status", () => {
    const words = `push declined: ${"x".repeat(5000)}`;
    const verdict = retryVerdict({ status: 502, message: words, retriable: false }, 1, policy);
    expect(verdict).toEqual({ retry: false, why: words.slice(0, 4000) });
    // retriable: true is no final refusal.
    expect(retryVerdict({ status: 502, message: "later", retriable: true }, 1, policy)).toMatchObject({ retry: true });
  });

  it("says why in GitHub's status and words, bounded, or in the words of what was thrown", () => {
    expect(retryVerdict(refusal(404, {}, "Not Found"), 1, policy)).toEqual({ retry: false, why: "404: Not Found" });
    expect(retryVerdict(new Error("socket hang up"), 1, policy)).toMatchObject({ why: "no status: socket hang up" });
    expect(retryVerdict("a bare string", 1, policy)).toMatchObject({ retry: true, why: "no status: a bare string" });
    expect(retryVerdict(null, 1, policy)).toMatchObject({ retry: true, why: "no status: null" });
    const long = retryVerdict(refusal(500, {}, "y".repeat(2000)), 1, policy);
    expect(long.why).toHaveLength(500);
    expect(long.why.startsWith("500: yyy")).toBe(true);
  });

  it("backs off from the first delay, doubling per attempt", () => {
    const delays = [1, 2, 3, 4, 5].map((attempt) => retryVerdict(refusal(500), attempt, policy)).map((verdict) => (verdict.retry ? verdict.afterMs : -1));
    expect(delays).toEqual([100, 200, 400, 800, 1000]);
    expect(retryVerdict(refusal(500), 0, policy)).toMatchObject({ afterMs: 100 });
  });
});

const STORY = { installationId: 1, owner: "octo", repo: "demo", issueNumber: 7, pullNumber: 9 };
const PUSH: PushWrite = { kind: "push", repositoryId: 3, repoDir: "/repos/demo", branch: "harness/story-7", sha: "b".repeat(40) };
const AT = "2026-12-05T10:00:00.000Z";

function entry(id: string, write: OutboxWrite, state: OutboxEntry["state"] = "pending", story: OutboxEntry["story"] = STORY): OutboxEntry {
  return { id, story, slot: `slot-${id}`, write, state, attempts: 2, writer: { pid: 1, startTime: "1" }, createdAt: AT, updatedAt: AT };
}

const checkOn = (headSha: string, status: "in_progress" | "completed" = "in_progress"): OutboxWrite => ({
  kind: "check",
  name: "harness / story",
  headSha,
  externalId: "story-7",
  status,
  output: { title: "Running", summary: "running" },
  actions: [{ label: "Retry", description: "retry", identifier: "retry" }],
});

describe("afterRefusedPush", () => {
  it("changes nothing and tells nobody when no report waited behind the push (the job still reports)", () => {
    expect(afterRefusedPush(PUSH, "declined", [], AT)).toEqual({ entries: [], notices: [] });
  });

  it("closes a check run on the head GitHub has as failed in GitHub's words, and withholds what would claim the work arrived", () => {
    const why = `pre-receive hook declined\n${"z".repeat(400)}`;
    const onOldHead = entry("2", checkOn("a".repeat(40)));
    const onPushedCommit = entry("3", checkOn(PUSH.sha));
    const comment = entry("4", { kind: "status-comment", issueNumber: 7, body: "✅ done" });
    const { entries, notices } = afterRefusedPush(PUSH, why, [onOldHead, onPushedCommit, comment], AT);

    expect(entries[0]).toEqual({
      ...onOldHead,
      write: {
        ...onOldHead.write,
        status: "completed",
        conclusion: "failure",
        completedAt: AT,
        output: expect.objectContaining({ title: "Blocked: push-refused" }),
        actions: [],
      },
      attempts: 0,
      updatedAt: AT,
    });
    expect(entries[0]?.state).toBe("pending");
    for (const withheld of [entries[1], entries[2]]) {
      expect(withheld).toMatchObject({
        state: "undeliverable",
        updatedAt: AT,
        lastError: "withheld: the push it reports on was refused (pre-receive hook declined)",
      });
    }
    expect(entries[1]?.write).toBe(onPushedCommit.write);

    expect(notices).toEqual([
      { slot: "label:blocked", write: { kind: "label", label: BLOCKED_LABEL, numbers: [7, 9], present: true } },
      { slot: `comment:push-refused:${PUSH.sha}`, write: { kind: "comment", issueNumber: 7, body: expect.stringContaining("push-refused") as unknown } },
    ]);
    const body = (notices[1]?.write as { body: string }).body;
    expect(body).toContain("pre-receive hook declined");
    expect(body).toContain(PUSH.sha.slice(0, 12));
    expect(body).toContain("finished, but its result could not be delivered (push-refused)");
  });

  it("labels only the issue of a story without a pull request, and bounds a long first line of the refusal", () => {
    const story = { installationId: 1, owner: "octo", repo: "demo", issueNumber: 7 };
    const { entries, notices } = afterRefusedPush(PUSH, "w".repeat(300), [entry("2", { kind: "comment", issueNumber: 7, body: "hi" }, "pending", story)], AT);
    expect(notices[0]?.write).toMatchObject({ numbers: [7] });
    expect(entries[0]?.lastError).toBe(`withheld: the push it reports on was refused (${"w".repeat(200)})`);
  });
});

describe("recoverEntry", () => {
  const self = selfIdentity();
  const dead = { pid: 1, startTime: `${identityOf(1)?.startTime ?? "x"}0` };
  const NOW = Date.parse(AT);
  const left = (write: OutboxWrite, writer: OutboxEntry["writer"], result?: OutboxEntry["result"]): OutboxEntry => ({
    ...entry("1", write),
    writer,
    ...(result ? { result } : {}),
  });

  it("closes an unfinished check run of a dead writer as interrupted, to be sent again from its first attempt", () => {
    const recovered = recoverEntry(left(checkOn(PUSH.sha), dead, { checkRunId: 42 }), self, NOW);
    expect(recovered).toMatchObject({ state: "pending", attempts: 0, updatedAt: AT, result: { checkRunId: 42 } });
    expect(recovered.write).toEqual({
      ...checkOn(PUSH.sha),
      status: "completed",
      conclusion: "cancelled",
      completedAt: AT,
      output: expect.objectContaining({ title: "Interrupted" }),
      actions: [],
    });
  });

  it("marks the closing to adopt a check run the dead writer may have created without recording its id", () => {
    expect(recoverEntry(left(checkOn(PUSH.sha), dead), self, NOW).write).toMatchObject({ status: "completed", adoptUnfinished: true });
    expect(recoverEntry(left(checkOn(PUSH.sha), dead, {}), self, NOW).write).toMatchObject({ adoptUnfinished: true });
  });

  it("keeps as they are: a finished check run, any other write, and the entries of a writer still running", () => {
    const finished = left(checkOn(PUSH.sha, "completed"), dead);
    const comment = left({ kind: "status-comment", issueNumber: 7, body: "x" }, dead);
    const mine = left(checkOn(PUSH.sha), { pid: self.pid, startTime: self.startTime });
    const alive = left(checkOn(PUSH.sha), { pid: 1, startTime: identityOf(1)?.startTime ?? "" });
    for (const kept of [finished, comment, mine, alive]) expect(recoverEntry(kept, self, NOW)).toBe(kept);
  });

  it("closes an entry whose pid is this process's but whose start time is not (a pid reused after a restart)", () => {
    const reused = left(checkOn(PUSH.sha), { pid: self.pid, startTime: `${self.startTime}0` });
    expect(recoverEntry(reused, self, NOW).write).toMatchObject({ status: "completed", conclusion: "cancelled" });
  });
});
