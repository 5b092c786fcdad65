/**
 * The outbox over its life, against a recording deliverer: what it finds on disk when it opens,
 * an outbox kept in memory only, passes that overlap, a close while a write is on its way,
 * states recorded while an earlier one is on its way or refused, and what it logs and keeps
 * when GitHub or the disk refuses.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { identityOf } from "../../src/exec/index.js";
import { Outbox, type OutboxEntry, type OutboxOptions, type OutboxStory, type OutboxWrite, type PushWrite } from "../../src/outbox/index.js";
import { RecordingLog } from "../github/fake-setup.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

let issue = 100;
function newStory(): OutboxStory {
  issue += 1;
  return { installationId: 1, owner: "octo", repo: "demo", issueNumber: issue, pullNumber: 500 + issue };
}

const HEAD = "a".repeat(40);
const PUSH: PushWrite = { kind: "push", repositoryId: 3, repoDir: "/repos/demo", branch: "harness/story", sha: "b".repeat(40) };
const checkOn = (title: string, status: "in_progress" | "completed" = "in_progress"): OutboxWrite => ({
  kind: "check",
  name: "harness / story",
  headSha: HEAD,
  externalId: "story",
  status,
  output: { title, summary: title },
});
const comment = (body: string): OutboxWrite => ({ kind: "comment", issueNumber: 1, body });
const failure = (status: number, message = "refused"): Error => Object.assign(new Error(message), { status });

/** A deliverer that records what it is handed and answers check runs with ids; `refuse` decides a refusal, `gate` holds a delivery. */
function recorder() {
  const sent: OutboxEntry[] = [];
  const state: { refuse?: (entry: OutboxEntry) => unknown; gate?: Promise<void> } = {};
  const deliver: OutboxOptions["deliver"] = async (entry) => {
    if (state.gate) await state.gate;
    const refusal = state.refuse?.(entry);
    if (refusal !== undefined) throw refusal;
    sent.push(entry);
    // An update of a check run GitHub created answers with the same id.
    return entry.write.kind === "check" ? { checkRunId: entry.result?.checkRunId ?? 100 + sent.length } : {};
  };
  const bodies = (): string[] =>
    sent.map((entry) => ("body" in entry.write ? entry.write.body : entry.write.kind === "check" ? entry.write.output.title : entry.slot));
  return { sent, deliver, state, bodies };
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

const folder = (): string => join(makeTempDir("harness-outbox-life-"), "outbox");
const jsonFiles = (dir: string): string[] => readdirSync(dir).filter((name) => name.endsWith(".json"));
/** The entries on disk that parse (a torn file left by a crash does not). */
const onDisk = (dir: string): OutboxEntry[] =>
  jsonFiles(dir).flatMap((name) => {
    try {
      return [JSON.parse(readFileSync(join(dir, name), "utf8")) as OutboxEntry];
    } catch {
      return [];
    }
  });
const NO_BACKOFF = { baseDelayMs: 0, maxDelayMs: 0 };

/**
 * An outbox whose first delivery first records `newer` in `slot` (a state arriving while the
 * older one is on its way), then goes on to `deliver`, or is refused with `refuseFirst`.
 */
async function outboxWithLateState(
  story: OutboxStory,
  slot: string,
  newer: OutboxWrite,
  deliver: OutboxOptions["deliver"],
  options: { refuseFirst?: Error; policy?: OutboxOptions["policy"] } = {},
): Promise<{ outbox: Outbox; dir: string }> {
  const late: { outbox?: Outbox } = {};
  let first = true;
  const dir = folder();
  const outbox = await Outbox.open({
    dir,
    log: new RecordingLog(),
    ...(options.policy ? { policy: options.policy } : {}),
    deliver: async (entry) => {
      if (first) {
        first = false;
        await late.outbox?.put(story, slot, newer);
        if (options.refuseFirst) throw options.refuseFirst;
      }
      return deliver(entry);
    },
  });
  late.outbox = outbox;
  return { outbox, dir };
}

function leftEntry(id: string, story: OutboxStory, slot: string, write: OutboxWrite, writer: OutboxEntry["writer"]): OutboxEntry {
  return { id, story, slot, write, state: "pending", attempts: 3, writer, createdAt: "2026-12-05T09:00:00.000Z", updatedAt: "2026-12-05T09:00:00.000Z" };
}

describe("opening the outbox over what an earlier process left", () => {
  it("loads what it can read, reports what it cannot, keeps only the newer of a slot's two files, and closes a dead writer's check run on disk at once", async () => {
    const dir = folder();
    mkdirSync(dir, { recursive: true });
    const story = newStory();
    const dead = { pid: 1, startTime: `${identityOf(1)?.startTime ?? "x"}0` };
    const entries = [
      leftEntry("000000000000001-000001-aaaaaaaa", story, "comment:a", comment("older"), dead),
      leftEntry("000000000000002-000001-bbbbbbbb", story, "comment:a", comment("newer"), dead),
      leftEntry("000000000000003-000001-cccccccc", story, "check:story", checkOn("Running"), dead),
    ];
    for (const entry of entries) writeFileSync(join(dir, `${entry.id}.json`), JSON.stringify(entry));
    writeFileSync(join(dir, "000000000000004-000001-dddddddd.json"), "{ torn");
    const log = new RecordingLog();
    const github = recorder();
    const outbox = await Outbox.open({ dir, deliver: github.deliver, log });

    expect(log.lines).toEqual([{ level: "warn", details: { file: "000000000000004-000001-dddddddd.json" }, message: "outbox: unreadable entry left alone" }]);
    expect(jsonFiles(dir).sort()).toEqual([
      "000000000000002-000001-bbbbbbbb.json",
      "000000000000003-000001-cccccccc.json",
      "000000000000004-000001-dddddddd.json",
    ]);
    // Recovered on disk before anything is sent: a second crash now still closes it.
    expect(onDisk(dir).find((entry) => entry.slot === "check:story")).toMatchObject({ attempts: 0, write: { status: "completed", conclusion: "cancelled" } });
    expect(onDisk(dir).find((entry) => entry.slot === "comment:a")).toMatchObject({ attempts: 3, write: comment("newer") });

    await outbox.flush(story);
    expect(github.bodies()).toEqual(["newer", "Interrupted"]);
    // What an earlier process left is delivered and let go of: its reporter is gone.
    expect(outbox.held()).toBe(0);
    await outbox.close();
  });
});

describe("an outbox in memory only", () => {
  it("records, retries, delivers, discards and forgets without a folder", async () => {
    const github = recorder();
    const outbox = await Outbox.open({ deliver: github.deliver, log: new RecordingLog(), policy: NO_BACKOFF });
    const story = newStory();
    github.state.refuse = () => failure(502);
    await outbox.put(story, "check:story", checkOn("Running"));
    await outbox.put(story, "comment:a", comment("a"));
    await outbox.flush(story);
    expect(outbox.lastError(story, "check:story")).toBe("502: refused");
    await outbox.discard(story, "comment:a");
    github.state.refuse = undefined;
    await outbox.flush(story);
    await outbox.put(story, "check:story", checkOn("Done", "completed"), { last: true });
    await outbox.flush(story);
    expect(github.bodies()).toEqual(["Running", "Done"]);
    expect(outbox.result(story, "check:story")).toEqual({ checkRunId: 101 });
    expect(outbox.hasPending()).toBe(false);
    await outbox.close();
  });

  it("answers nothing for a slot it does not hold", async () => {
    const outbox = await Outbox.open({ deliver: recorder().deliver, log: new RecordingLog() });
    const story = newStory();
    expect([outbox.lastError(story, "none"), outbox.result(story, "none"), outbox.pending(story, "none")]).toEqual([undefined, undefined, false]);
    await outbox.close();
  });
});

describe("passes, order and close", () => {
  it("runs one pass per story at a time: two flushes at once send each write once", async () => {
    const github = recorder();
    const held = gate();
    github.state.gate = held.promise;
    const outbox = await Outbox.open({ dir: folder(), deliver: github.deliver, log: new RecordingLog() });
    const story = newStory();
    await outbox.put(story, "comment:a", comment("a"));
    const first = outbox.flush(story);
    const second = outbox.flush(story);
    outbox.deliverSoon(story);
    held.open();
    await Promise.all([first, second]);
    await outbox.flush(story);
    expect(github.bodies()).toEqual(["a"]);
    await outbox.close();
  });

  it("waits, on close, for a write on its way", async () => {
    const github = recorder();
    const held = gate();
    github.state.gate = held.promise;
    const outbox = await Outbox.open({ dir: folder(), deliver: github.deliver, log: new RecordingLog() });
    const story = newStory();
    await outbox.put(story, "comment:a", comment("a"));
    void outbox.flush(story);
    await settle();
    let closed = false;
    const closing = outbox.close().then(() => (closed = true));
    await settle();
    expect(closed).toBe(false);
    held.open();
    await closing;
    expect(github.bodies()).toEqual(["a"]);
  });

  it("lists what waits in the order it goes out, a state moved last after the rest", async () => {
    const github = recorder();
    github.state.refuse = () => failure(500);
    const outbox = await Outbox.open({ dir: folder(), deliver: github.deliver, log: new RecordingLog() });
    const story = newStory();
    await outbox.put(story, "comment:a", comment("a"));
    await outbox.put(story, "comment:b", comment("b"));
    await outbox.put(story, "comment:a", comment("a2"), { last: true });
    expect(outbox.list().map((entry) => entry.slot)).toEqual(["comment:b", "comment:a"]);
    await outbox.close();
  });

  it("tries a push even while a report recorded before it waits", async () => {
    const github = recorder();
    github.state.refuse = () => failure(500);
    let pushes = 0;
    const outbox = await Outbox.open({ dir: folder(), deliver: github.deliver, log: new RecordingLog(), pusher: async () => void (pushes += 1) });
    const story = newStory();
    await outbox.put(story, "comment:a", comment("a"));
    await outbox.put(story, "push", PUSH);
    await outbox.flush(story);
    expect([pushes, outbox.pending(story, "push"), outbox.pending(story, "comment:a")]).toEqual([1, false, true]);
    await outbox.close();
  });

  it("keeps the place of a state recorded after a pending push when it changes again, among the other writes behind the push", async () => {
    const github = recorder();
    let takes = false;
    const outbox = await Outbox.open({
      dir: folder(),
      deliver: github.deliver,
      log: new RecordingLog(),
      policy: NO_BACKOFF,
      pusher: async () => {
        if (!takes) throw failure(502);
      },
    });
    const story = newStory();
    await outbox.put(story, "push", PUSH);
    await outbox.flush(story);
    await outbox.put(story, "comment:x", comment("x1"));
    await outbox.put(story, "comment:y", comment("y"));
    await outbox.put(story, "comment:x", comment("x2"));
    takes = true;
    await outbox.flush(story);
    expect(github.bodies()).toEqual(["x2", "y"]);
    await outbox.close();
  });

  it("lets a slot's new state keep its place once a push is no longer pending (undeliverable)", async () => {
    const github = recorder();
    const outbox = await Outbox.open({
      dir: folder(),
      deliver: github.deliver,
      log: new RecordingLog(),
      pusher: async () => Promise.reject(Object.assign(new Error("declined"), { retriable: false })),
    });
    const story = newStory();
    await outbox.put(story, "check:story", checkOn("Running"));
    await outbox.flush(story);
    await outbox.put(story, "push", PUSH);
    await outbox.flush(story);
    expect(outbox.list().map((entry) => [entry.slot, entry.state])).toEqual([["push", "undeliverable"]]);
    github.state.refuse = () => failure(500);
    await outbox.put(story, "check:story", checkOn("Again"));
    expect(outbox.list().map((entry) => entry.slot)).toEqual(["check:story", "push"]);
    await outbox.close();
  });
});

describe("states that arrive while an older one is on its way", () => {
  it("keeps a check run's newer state pending with the id GitHub answered for the older, and sends it with that id", async () => {
    const story = newStory();
    const github = recorder();
    const { outbox } = await outboxWithLateState(story, "check:story", checkOn("Newer"), github.deliver);
    await outbox.put(story, "check:story", checkOn("Older"));
    await outbox.flush(story);
    expect(outbox.pending(story, "check:story")).toBe(true);
    expect(outbox.result(story, "check:story")).toEqual({ checkRunId: 101 });
    await outbox.flush(story);
    expect(github.bodies()).toEqual(["Older", "Newer"]);
    expect(github.sent[1]?.result).toEqual({ checkRunId: 101 });
    expect(outbox.pending(story, "check:story")).toBe(false);
    await outbox.close();
  });

  it("sends a newer status comment, keeping its file until it is delivered", async () => {
    const story = newStory();
    const github = recorder();
    const status = (body: string): OutboxWrite => ({ kind: "status-comment", issueNumber: 1, body });
    const { outbox, dir } = await outboxWithLateState(story, "status-comment", status("newer"), github.deliver);
    await outbox.put(story, "status-comment", status("older"));
    await outbox.flush(story);
    expect(onDisk(dir).map((entry) => [entry.state, (entry.write as { body: string }).body])).toEqual([["pending", "newer"]]);
    await outbox.flush(story);
    expect(github.bodies()).toEqual(["older", "newer"]);
    await outbox.close();
  });

  it("sends a newer state of a plain comment (a slot whose answer nothing needs)", async () => {
    const story = newStory();
    const github = recorder();
    const { outbox } = await outboxWithLateState(story, "comment:a", comment("newer"), github.deliver);
    await outbox.put(story, "comment:a", comment("older"));
    await outbox.flush(story);
    expect(outbox.pending(story, "comment:a")).toBe(true);
    await outbox.flush(story);
    expect(github.bodies()).toEqual(["older", "newer"]);
    await outbox.close();
  });

  it("keeps a newer state recorded while the older was being refused, and tries the newer one", async () => {
    const story = newStory();
    const github = recorder();
    const { outbox } = await outboxWithLateState(story, "comment:a", comment("newer"), github.deliver, { refuseFirst: failure(502), policy: NO_BACKOFF });
    await outbox.put(story, "comment:a", comment("older"));
    await outbox.flush(story);
    expect(outbox.list().map((entry) => [(entry.write as { body: string }).body, entry.attempts])).toEqual([["newer", 1]]);
    await outbox.flush(story);
    expect(github.bodies()).toEqual(["newer"]);
    await outbox.close();
  });
});

describe("refusals, records and logs", () => {
  it("logs each refusal with the slot, the attempt and when it is tried again, and a write given up with why", async () => {
    const github = recorder();
    const log = new RecordingLog();
    const outbox = await Outbox.open({ dir: folder(), deliver: github.deliver, log, policy: { baseDelayMs: 40, maxDelayMs: 40, maxAttempts: 2 } });
    const story = newStory();
    github.state.refuse = () => failure(502, "Bad gateway");
    await outbox.put(story, "comment:a", comment("a"));
    expect(await outbox.deliverNow(story, "comment:a", 2)).toBe("undeliverable");
    const key = `octo/demo#${story.issueNumber}`;
    expect(log.lines).toEqual([
      {
        level: "warn",
        details: { story: key, slot: "comment:a", attempts: 1, err: { message: "Bad gateway", status: 502 }, retryInMs: 40 },
        message: "outbox: GitHub refused a write; it is retried",
      },
      {
        level: "error",
        details: {
          story: key,
          slot: "comment:a",
          attempts: 2,
          err: { message: "Bad gateway", status: 502 },
          why: "gave up after 2 attempts; last 502: Bad gateway",
        },
        message: "outbox: a write is undeliverable",
      },
    ]);
    await outbox.close();
  });

  it("says so when a refused attempt cannot be recorded, and still retries it", async () => {
    const github = recorder();
    const log = new RecordingLog();
    const dir = folder();
    const outbox = await Outbox.open({ dir, deliver: github.deliver, log, policy: NO_BACKOFF });
    const story = newStory();
    await outbox.put(story, "comment:a", comment("a"));
    rmSync(dir, { recursive: true });
    writeFileSync(dir, "");
    github.state.refuse = () => failure(500);
    await outbox.flush(story);
    expect(log.lines.map((line) => line.message)).toEqual(["outbox: GitHub refused a write; it is retried", "outbox: could not record a failed attempt"]);
    github.state.refuse = undefined;
    await outbox.flush(story);
    expect(github.bodies()).toEqual(["a"]);
    await outbox.close();
  });

  it("delivers the writes after one GitHub refused for good (a report that is not a push withholds nothing)", async () => {
    const github = recorder();
    github.state.refuse = (entry) => (entry.slot === "comment:gone" ? failure(404) : undefined);
    const outbox = await Outbox.open({ dir: folder(), deliver: github.deliver, log: new RecordingLog() });
    const story = newStory();
    await outbox.put(story, "comment:gone", comment("gone"));
    await outbox.put(story, "comment:next", comment("next"));
    await outbox.flush(story);
    expect(github.bodies()).toEqual(["next"]);
    expect(outbox.list().map((entry) => [entry.slot, entry.state])).toEqual([["comment:gone", "undeliverable"]]);
    await outbox.close();
  });

  it("keeps a delivered check run that is still running on disk (a crash must close it), and lets a finished one's file go", async () => {
    const github = recorder();
    const dir = folder();
    const outbox = await Outbox.open({ dir, deliver: github.deliver, log: new RecordingLog() });
    const story = newStory();
    await outbox.put(story, "check:story", checkOn("Running"));
    await outbox.flush(story);
    expect(onDisk(dir).map((entry) => [entry.state, entry.result])).toEqual([["delivered", { checkRunId: 101 }]]);
    await outbox.put(story, "check:story", checkOn("Done", "completed"));
    await outbox.flush(story);
    expect(jsonFiles(dir)).toEqual([]);
    await outbox.close();
  });

  it("when a push is refused for good, leaves a report recorded before it as it was, logs the push, and keeps the story's answers", async () => {
    const github = recorder();
    const log = new RecordingLog();
    github.state.refuse = (entry) => (entry.slot === "comment:before" ? failure(500) : undefined);
    const outbox = await Outbox.open({
      dir: folder(),
      deliver: github.deliver,
      log,
      policy: NO_BACKOFF,
      pusher: async () => Promise.reject(Object.assign(new Error("declined"), { retriable: false })),
    });
    const story = newStory();
    await outbox.put(story, "comment:before", comment("before"));
    await outbox.put(story, "push", PUSH);
    await outbox.put(story, "check:story", checkOn("Done", "completed"));
    await outbox.flush(story);
    const before = outbox.list().find((entry) => entry.slot === "comment:before");
    expect(before).toMatchObject({ state: "pending", write: comment("before"), lastError: "500: refused" });
    expect(log.lines.find((line) => line.message === "outbox: a story's push was refused after its job ended; its reports say so")?.details).toEqual({
      story: `octo/demo#${story.issueNumber}`,
      branch: PUSH.branch,
      sha: PUSH.sha,
      why: "declined",
    });
    github.state.refuse = undefined;
    await outbox.flush(story);
    await outbox.flush(story);
    expect(github.bodies()).toEqual(["before", "Blocked: push-refused", "label:blocked", expect.stringContaining("push-refused")]);
    // Not retired: the check run's id is kept for the story's later writes.
    expect(outbox.result(story, "check:story")).toEqual({ checkRunId: 102 });
    await outbox.close();
  });
});
