import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Outbox, type OutboxEntry, type OutboxStory, type OutboxWrite } from "../../src/outbox/index.js";
import { githubDelivery } from "../../src/github/report/index.js";
import { identityOf } from "../../src/exec/index.js";
import { fakeOctokit } from "../support/fake-github/client.js";
import { openStoryPull, NAME, OWNER, RecordingLog } from "../github/fake-setup.js";
import { STATUS_MARKER } from "../e2e/scenario.js";
import { eventually } from "../support/poll.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

const gh = useFakeGitHub();
let octokit: ReturnType<typeof fakeOctokit>;
const dirs: string[] = [];

beforeAll(async () => {
  await gh.addRepository({ owner: OWNER, name: NAME, files: { "README.md": "# demo\n" } });
  octokit = fakeOctokit(gh, { installation: true });
});

afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "harness-outbox-"));
  dirs.push(dir);
  return dir;
}

async function story(): Promise<{ ref: OutboxStory; headSha: string }> {
  const issue = gh.createIssue(OWNER, NAME, { title: "Outbox", user: "writer" });
  const pull = await openStoryPull(gh, octokit, issue.number);
  return { ref: { installationId: gh.installationId, owner: OWNER, repo: NAME, issueNumber: issue.number, pullNumber: pull.number }, headSha: pull.headSha };
}

const check = (headSha: string, status: "in_progress" | "completed", title: string): OutboxWrite => ({
  kind: "check",
  name: "harness / story",
  headSha,
  externalId: "story-x",
  status,
  output: { title, summary: title },
  ...(status === "completed" ? { conclusion: "success" as const, completedAt: new Date().toISOString() } : {}),
});

/** A `harness / story` check run created on GitHub directly, as an earlier process did. */
async function createdCheckRun(headSha: string, status: "queued" | "in_progress", externalId = "story-x"): Promise<number> {
  const { data } = await octokit.rest.checks.create({ owner: OWNER, repo: NAME, name: "harness / story", head_sha: headSha, status, external_id: externalId });
  return data.id;
}

/** Writes into `dir` the entry of an in-progress check run that a dead process left, as the outbox keeps it on disk. */
function leftByDeadProcess(
  dir: string,
  id: string,
  ref: OutboxStory,
  headSha: string,
  state: Pick<OutboxEntry, "slot" | "state" | "attempts" | "result">,
): void {
  const now = new Date().toISOString();
  const left: OutboxEntry = {
    id,
    story: ref,
    write: check(headSha, "in_progress", "running"),
    ...state,
    writer: { pid: 1, startTime: `${identityOf(1)?.startTime ?? "x"}0` },
    createdAt: now,
    updatedAt: now,
  };
  writeFileSync(join(dir, `${id}.json`), JSON.stringify(left));
}

describe("Outbox", () => {
  it("records a write before it is tried, coalesces states while GitHub refuses, and delivers only the final one", async () => {
    const dir = tempDir();
    const { ref, headSha } = await story();
    const log = new RecordingLog();
    const outbox = await Outbox.open({ dir, deliver: githubDelivery(async () => octokit), log, policy: { baseDelayMs: 10, maxDelayMs: 50 }, tickMs: 20 });
    const window = gh.injectFailure({ method: "POST", path: /\/check-runs$/, failure: { kind: "bad-gateway" } });
    try {
      await outbox.put(ref, "check:a", check(headSha, "in_progress", "first"));
      expect(readdirSync(dir)).toHaveLength(1);
      await outbox.flush(ref);
      expect(window.served).toBe(1);
      await outbox.put(ref, "check:a", check(headSha, "in_progress", "second"));
      await outbox.put(ref, "check:a", check(headSha, "completed", "final"));
      const [file] = readdirSync(dir);
      const recorded = JSON.parse(readFileSync(join(dir, file ?? ""), "utf8")) as OutboxEntry;
      expect(recorded).toMatchObject({ state: "pending", write: { output: { title: "final" } } });
      expect(outbox.hasPending(ref)).toBe(true);
    } finally {
      window.close();
    }
    outbox.start();
    await eventually("delivery", () => (!outbox.hasPending(ref) ? true : undefined));
    await outbox.close();
    const runs = gh.state.checkRuns.filter((run) => run.headSha === headSha && run.externalId === "story-x");
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "completed", conclusion: "success", output: { title: "final" } });
    expect(runs[0]?.history).toHaveLength(1);
    // A final state delivered leaves nothing on disk.
    expect(readdirSync(dir)).toEqual([]);
    expect(log.lines.some((line) => line.level === "warn" && line.message === "outbox: GitHub refused a write; it is retried")).toBe(true);
    gh.assertNoUnexpectedRequests();
  });

  it("keeps a write that can never be delivered as undeliverable, listed with its story", async () => {
    const dir = tempDir();
    const { ref } = await story();
    const log = new RecordingLog();
    const outbox = await Outbox.open({ dir, deliver: githubDelivery(async () => octokit), log });
    await outbox.put(ref, "status-comment", { kind: "status-comment", issueNumber: 99_999, body: "gone" });
    await outbox.flush(ref);
    expect(outbox.list()).toEqual([expect.objectContaining({ slot: "status-comment", state: "undeliverable", lastError: expect.stringContaining("404") })]);
    expect(log.lines.some((line) => line.level === "error" && line.message === "outbox: a write is undeliverable")).toBe(true);
    // Still listed after a restart, for `harness status`.
    await outbox.close();
    const reopened = await Outbox.open({ dir, deliver: githubDelivery(async () => octokit), log });
    expect(reopened.list().map((entry) => entry.state)).toEqual(["undeliverable"]);
    expect(gh.takeUnexpectedRequests().every((request) => request.status === 404)).toBe(true);
  });

  it("holds in memory only what a later write needs: a story's delivered writes go once its reporter is done, pending ones once delivered", async () => {
    const { ref, headSha } = await story();
    const outbox = await Outbox.open({
      dir: tempDir(),
      deliver: githubDelivery(async () => octokit),
      log: new RecordingLog(),
      policy: { baseDelayMs: 10, maxDelayMs: 50 },
      tickMs: 20,
    });
    // A comment is never written again: delivered, it is gone from memory at once.
    await outbox.put(ref, "comment:hello", { kind: "comment", issueNumber: ref.issueNumber, body: "hello" });
    await outbox.flush(ref);
    expect(outbox.held()).toBe(0);
    // A check run's id serves its next state while the reporter lives.
    await outbox.put(ref, "check:a", check(headSha, "in_progress", "running"));
    await outbox.flush(ref);
    const id = outbox.result(ref, "check:a")?.checkRunId;
    expect(id).toEqual(expect.any(Number));
    await outbox.put(ref, "check:a", check(headSha, "completed", "done"));
    await outbox.flush(ref);
    expect(gh.state.checkRuns.filter((run) => run.headSha === headSha && run.externalId === "story-x")).toEqual([
      expect.objectContaining({ id, status: "completed" }),
    ]);
    // GitHub refuses the status comment for a while when the reporter is done.
    const window = gh.injectFailure({ method: "POST", path: /\/comments$/, failure: { kind: "bad-gateway" } });
    try {
      await outbox.put(ref, "status-comment", { kind: "status-comment", issueNumber: ref.pullNumber ?? 0, body: "final" });
      await outbox.flush(ref);
      expect(outbox.held()).toBe(2);
      outbox.forget(ref);
      expect(outbox.held()).toBe(1);
      expect(outbox.hasPending(ref)).toBe(true);
    } finally {
      window.close();
    }
    outbox.start();
    await eventually("the pending comment delivered and let go", () => (outbox.held() === 0 ? true : undefined));
    await outbox.close();
    expect(outbox.hasPending(ref)).toBe(false);
    gh.assertNoUnexpectedRequests();
  });

  it("closes, as interrupted, a check run that a dead process left in progress", async () => {
    const dir = tempDir();
    const { ref, headSha } = await story();
    const data = { id: await createdCheckRun(headSha, "in_progress") };
    leftByDeadProcess(dir, "001700000000000-000001-00000001", ref, headSha, {
      slot: "check:old",
      state: "delivered",
      attempts: 0,
      result: { checkRunId: data.id },
    });
    const outbox = await Outbox.open({ dir, deliver: githubDelivery(async () => octokit), log: new RecordingLog(), tickMs: 20 });
    outbox.start();
    await eventually("the stale check run closed", () => (gh.state.checkRuns.find((run) => run.id === data.id)?.status === "completed" ? true : undefined));
    await outbox.close();
    expect(gh.state.checkRuns.find((run) => run.id === data.id)).toMatchObject({ conclusion: "cancelled", output: { title: "Interrupted" } });
    gh.assertNoUnexpectedRequests();
  });

  it("closes, as interrupted, the check run a dead process created without recording its id, instead of creating another", async () => {
    const dir = tempDir();
    const { ref, headSha } = await story();
    // The dead App's creation reached GitHub; its answer (the id) died with it.
    const data = { id: await createdCheckRun(headSha, "queued") };
    // Another story's check run of the same name on the same head is not this story's to close.
    const other = { data: { id: await createdCheckRun(headSha, "queued", "story-y") } };
    leftByDeadProcess(dir, "001700000000000-000002-00000002", ref, headSha, { slot: "check:lost", state: "pending", attempts: 1 });
    const outbox = await Outbox.open({ dir, deliver: githubDelivery(async () => octokit), log: new RecordingLog(), tickMs: 20 });
    outbox.start();
    await eventually("the lost check run closed", () => (gh.state.checkRuns.find((run) => run.id === data.id)?.status === "completed" ? true : undefined));
    await eventually("the outbox to let go", () => (outbox.hasPending(ref) ? undefined : true));
    await outbox.close();
    expect(gh.state.checkRuns.find((run) => run.id === data.id)).toMatchObject({ conclusion: "cancelled", output: { title: "Interrupted" } });
    const onHead = gh.state.checkRuns.filter((run) => run.headSha === headSha && run.name === "harness / story");
    expect(onHead.map((run) => run.id).sort()).toEqual([data.id, other.data.id].sort());
    expect(gh.state.checkRuns.find((run) => run.id === other.data.id)?.status).toBe("queued");
    gh.assertNoUnexpectedRequests();
  });

  it("says whether it is durable, and delivers a story's writes in order without the caller waiting (deliverSoon)", async () => {
    const log = new RecordingLog();
    const memory = await Outbox.open({ deliver: githubDelivery(async () => octokit), log });
    expect(memory.durable).toBe(false);
    await memory.close();
    const outbox = await Outbox.open({ dir: tempDir(), deliver: githubDelivery(async () => octokit), log });
    expect(outbox.durable).toBe(true);
    const { ref, headSha } = await story();
    const gate = gh.holdRequests({ method: "POST", path: /\/check-runs$/ });
    await outbox.put(ref, "check:story", check(headSha, "completed", "Done"));
    await outbox.put(ref, "status-comment", { kind: "status-comment", issueNumber: ref.pullNumber!, body: `${STATUS_MARKER}\nDone` });
    // Returns at once; the check run waits at GitHub's gate, the comment behind it.
    outbox.deliverSoon(ref);
    await eventually("the check run at the gate", () => (gate.waiting === 1 ? true : undefined));
    expect(outbox.hasPending(ref)).toBe(true);
    expect(gh.state.commentsOn(OWNER, NAME, ref.pullNumber!)).toEqual([]);
    gate.open();
    await eventually("both delivered", () => (outbox.hasPending(ref) ? undefined : true));
    const created = gh.state.requests.findIndex((request) => request.method === "POST" && request.path.endsWith("/check-runs") && request.status === 201);
    const commented = gh.state.requests.findIndex((request) => request.method === "POST" && request.path.endsWith(`/issues/${ref.pullNumber}/comments`));
    expect([created > -1, commented > created]).toEqual([true, true]);
    // Once closed, nothing more is started.
    await outbox.close();
    expect(() => outbox.deliverSoon(ref)).not.toThrow();
    gh.assertNoUnexpectedRequests();
  });

  it("keeps a slot's place in the story's order, or moves its new state after every write so far when asked (last)", async () => {
    const dir = tempDir();
    const outbox = await Outbox.open({ dir, deliver: githubDelivery(async () => octokit), log: new RecordingLog() });
    const { ref, headSha } = await story();
    await outbox.put(ref, "check:story", check(headSha, "in_progress", "Running"));
    await outbox.put(ref, "status-comment", { kind: "status-comment", issueNumber: ref.pullNumber!, body: `${STATUS_MARKER}\nRunning` });
    await outbox.put(ref, "check:story", check(headSha, "completed", "Kept its place"));
    const order = (): string[] =>
      readdirSync(dir)
        .sort()
        .map((name) => (JSON.parse(readFileSync(join(dir, name), "utf8")) as OutboxEntry).slot);
    expect(order()).toEqual(["check:story", "status-comment"]);
    await outbox.put(ref, "check:story", check(headSha, "completed", "Goes last"), { last: true });
    // One file per slot: the earlier state's file is gone, the new one sorts after the comment.
    expect(order()).toEqual(["status-comment", "check:story"]);
    const from = gh.state.requests.length;
    await outbox.flush(ref);
    const sent = gh.state.requests
      .slice(from)
      .filter((request) => request.method === "POST")
      .map((request) => request.path.split("/").pop());
    expect(sent).toEqual(["comments", "check-runs"]);
    expect(gh.state.checkRuns.at(-1)?.output.title).toBe("Goes last");
    await outbox.close();
    gh.assertNoUnexpectedRequests();
  });

  it("drains at a stop: delivers what is due now and waits for it, but no longer than its bound (the rest stays on disk)", async () => {
    const log = new RecordingLog();
    const dir = tempDir();
    const outbox = await Outbox.open({ dir, deliver: githubDelivery(async () => octokit), log });
    const { ref, headSha } = await story();
    await outbox.put(ref, "check:story", check(headSha, "completed", "Done"));
    await outbox.drain(60_000);
    expect(outbox.hasPending(ref)).toBe(false);
    expect(readdirSync(dir).filter((name) => name.endsWith(".json"))).toEqual([]);
    // GitHub holds the next write: the drain gives up at its bound, the write stays on disk.
    const gate = gh.holdRequests({ method: "POST", path: /\/issues\/\d+\/comments$/ });
    await outbox.put(ref, "comment:x", { kind: "comment", issueNumber: ref.issueNumber, body: "held" });
    await outbox.drain(50);
    await eventually("the comment at GitHub's gate", () => (gate.waiting === 1 ? true : undefined));
    expect(outbox.hasPending(ref)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.endsWith(".json"))).toHaveLength(1);
    gate.open();
    await outbox.close();
    gh.assertNoUnexpectedRequests();
  });

  it("lets a state marked beforePush go out ahead of a waiting push, while the story's other new states wait behind it", async () => {
    const { ref, headSha } = await story();
    let githubTakesPushes = false;
    const pusher = async (): Promise<void> => {
      if (!githubTakesPushes) throw Object.assign(new Error("HTTP 502"), { status: 502 });
    };
    // Not started: only the test's own calls try anything.
    const outbox = await Outbox.open({
      dir: tempDir(),
      deliver: githubDelivery(async () => octokit),
      log: new RecordingLog(),
      pusher,
      policy: { baseDelayMs: 10, maxDelayMs: 20 },
    });
    await outbox.put(ref, "check:story", check(headSha, "in_progress", "Running"));
    await outbox.put(ref, "status-comment", { kind: "status-comment", issueNumber: ref.issueNumber, body: `${STATUS_MARKER}\nRunning` });
    await outbox.flush(ref);
    const push: OutboxWrite = { kind: "push", repositoryId: 1, repoDir: "/nowhere", branch: "harness/story-x", sha: "f".repeat(40) };
    await outbox.put(ref, "push", push);
    expect(await outbox.deliverNow(ref, "push", 1)).toBe("pending");

    await outbox.put(ref, "check:story", check(headSha, "in_progress", "Push waiting"), { beforePush: true });
    await outbox.put(ref, "status-comment", { kind: "status-comment", issueNumber: ref.issueNumber, body: `${STATUS_MARKER}\nCompleted` });
    await outbox.flush(ref);
    const storyRun = () => gh.state.checkRuns.filter((run) => run.headSha === headSha && run.name === "harness / story");
    expect(storyRun().map((run) => run.output.title)).toEqual(["Push waiting"]);
    const comment = () => gh.state.commentsOn(OWNER, NAME, ref.issueNumber).find((each) => each.body.startsWith(STATUS_MARKER))?.body;
    expect(comment()).toContain("Running");
    expect(outbox.pending(ref, "push")).toBe(true);

    // The push goes through: what waited behind it follows; the next state of the check run replaces the line.
    githubTakesPushes = true;
    await outbox.put(ref, "check:story", check(headSha, "completed", "Moved"));
    expect(await outbox.deliverNow(ref, "push", 10)).toBe("delivered");
    await outbox.flush(ref);
    expect(comment()).toContain("Completed");
    expect(storyRun().map((run) => [run.status, run.output.title])).toEqual([["completed", "Moved"]]);
    await outbox.close();
    gh.assertNoUnexpectedRequests();
  });
});
