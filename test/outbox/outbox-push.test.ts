/**
 * The outbox's order and its push, against a recording deliverer (the outbox's own seam: what
 * it hands GitHub's room, and what that room answers): writes before a push go out while the
 * push waits, writes after it wait for it, a push refused for good turns the reports behind it
 * into the truth, and each slot's retries, rate limits and records behave as promised.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Outbox, type OutboxEntry, type OutboxOptions, type OutboxStory, type OutboxWrite, type PushWrite } from "../../src/outbox/index.js";
import { RecordingLog } from "../github/fake-setup.js";
import { eventually } from "../support/poll.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

let issue = 0;
function newStory(pullNumber?: number): OutboxStory {
  issue += 1;
  return { installationId: 1, owner: "octo", repo: "demo", issueNumber: issue, ...(pullNumber !== undefined ? { pullNumber } : {}) };
}

const OLD_HEAD = "a".repeat(40);
const PUSH: PushWrite = { kind: "push", repositoryId: 3, repoDir: "/repos/demo", branch: "harness/story", sha: "b".repeat(40) };

const checkOn = (headSha: string, title: string, status: "in_progress" | "completed" = "in_progress"): OutboxWrite => ({
  kind: "check",
  name: "harness / story",
  headSha,
  externalId: "story",
  status,
  output: { title, summary: title },
});
const comment = (body: string, issueNumber = 1): OutboxWrite => ({ kind: "comment", issueNumber, body });

/** What the deliverer was handed, in order; it answers each check run with an id, or refuses as `refuse` says. */
function recorder() {
  const sent: OutboxEntry[] = [];
  let refuse: ((entry: OutboxEntry) => unknown) | undefined;
  const deliver: OutboxOptions["deliver"] = async (entry) => {
    const refusal = refuse?.(entry);
    if (refusal !== undefined) throw refusal;
    sent.push(entry);
    return entry.write.kind === "check" ? { checkRunId: 100 + sent.length } : {};
  };
  return {
    sent,
    deliver,
    refuseWith: (rule: ((entry: OutboxEntry) => unknown) | undefined) => void (refuse = rule),
    titles: () => sent.map((entry) => (entry.write.kind === "check" ? entry.write.output.title : entry.write.kind === "push" ? "push" : entry.slot)),
  };
}

async function openOutbox(options: Partial<OutboxOptions> & Pick<OutboxOptions, "deliver">): Promise<{ outbox: Outbox; log: RecordingLog; dir: string }> {
  const log = new RecordingLog();
  const dir = join(makeTempDir("harness-outbox-push-"), "outbox");
  // No backoff: a refused write is due again at once, so each pass decides by order alone.
  const outbox = await Outbox.open({ dir, log, policy: { baseDelayMs: 0, maxDelayMs: 0 }, ...options });
  return { outbox, log, dir };
}

const files = (dir: string): string[] => readdirSync(dir).filter((name) => name.endsWith(".json"));
const refused = (message: string): Error => Object.assign(new Error(message), { retriable: false });

describe("the outbox's push", () => {
  it("sends the writes recorded before a waiting push, and holds every write recorded after it until it went through", async () => {
    const github = recorder();
    let pushes = 0;
    let takesPushes = false;
    const { outbox } = await openOutbox({
      deliver: github.deliver,
      pusher: async () => {
        pushes += 1;
        if (!takesPushes) throw Object.assign(new Error("HTTP 502"), { status: 502 });
      },
    });
    const story = newStory();
    await outbox.put(story, "check:story", checkOn(OLD_HEAD, "Running"));
    await outbox.put(story, "push", PUSH);
    await outbox.put(story, "comment:end", comment("Completed"));
    await outbox.flush(story);
    expect([github.titles(), pushes]).toEqual([["Running"], 1]);
    expect(outbox.pending(story, "push")).toBe(true);
    expect(outbox.lastError(story, "push")).toBe("502: HTTP 502");
    // A newer state of a slot recorded before the push goes after it too (what it says waits for the work).
    await outbox.put(story, "check:story", checkOn(PUSH.sha, "Completed", "completed"));
    await outbox.flush(story);
    expect(github.titles()).toEqual(["Running"]);

    takesPushes = true;
    expect(await outbox.deliverNow(story, "push", 5)).toBe("delivered");
    await outbox.flush(story);
    expect(github.titles()).toEqual(["Running", "comment:end", "Completed"]);
    // The newer state of the check run updates the run GitHub created.
    expect(github.sent.at(-1)?.result).toEqual({ checkRunId: 101 });
    expect(outbox.hasPending(story)).toBe(false);
    await outbox.close();
  });

  it("retries a push without a pusher, saying so, and never claims it delivered", async () => {
    const github = recorder();
    const { outbox } = await openOutbox({ deliver: github.deliver });
    const story = newStory();
    await outbox.put(story, "push", PUSH);
    expect(await outbox.deliverNow(story, "push", 2)).toBe("pending");
    expect(outbox.lastError(story, "push")).toBe("no status: this outbox has no pusher");
    expect(outbox.list().map((entry) => [entry.slot, entry.attempts])).toEqual([["push", 2]]);
    await outbox.close();
  });

  it("when a push is refused for good behind waiting reports: fails the check run on the head GitHub has, withholds the rest, blocks and tells the story", async () => {
    const github = recorder();
    const { outbox, log, dir } = await openOutbox({ deliver: github.deliver, pusher: async () => Promise.reject(refused("pre-receive hook declined")) });
    const story = newStory(9);
    await outbox.put(story, "check:story", checkOn(OLD_HEAD, "Running"));
    await outbox.flush(story);
    await outbox.put(story, "push", PUSH);
    await outbox.put(story, "check:story", checkOn(OLD_HEAD, "Completed", "completed"));
    await outbox.put(story, "check:tests", checkOn(PUSH.sha, "Tests passed", "completed"));
    await outbox.put(story, "status-comment", { kind: "status-comment", issueNumber: 9, body: "✅ Completed" });

    expect(await outbox.deliverNow(story, "push", 3)).toBe("undeliverable");
    await outbox.flush(story);

    expect(github.titles()).toEqual(["Running", "Blocked: push-refused", "label:blocked", "comment:push-refused:" + PUSH.sha]);
    expect(github.sent[1]?.write).toMatchObject({ status: "completed", conclusion: "failure" });
    expect(github.sent[1]?.result).toEqual({ checkRunId: 101 });
    expect(github.sent[2]?.write).toMatchObject({ kind: "label", numbers: [story.issueNumber, 9], present: true });
    expect(github.sent[3]?.write).toMatchObject({
      kind: "comment",
      issueNumber: story.issueNumber,
      body: expect.stringContaining("pre-receive hook declined"),
    });
    // Withheld, listed with why; the push itself is let go of (its slot empty, its file gone).
    expect(outbox.list().map((entry) => [entry.slot, entry.state, entry.lastError])).toEqual([
      ["check:tests", "undeliverable", "withheld: the push it reports on was refused (pre-receive hook declined)"],
      ["status-comment", "undeliverable", "withheld: the push it reports on was refused (pre-receive hook declined)"],
    ]);
    expect(outbox.pending(story, "push")).toBe(false);
    expect(files(dir)).toHaveLength(2);
    expect(log.lines.filter((line) => line.level === "error").map((line) => line.message)).toEqual([
      "outbox: a write is undeliverable",
      "outbox: a story's push was refused after its job ended; its reports say so",
    ]);
    await outbox.close();
  });

  it("keeps a push refused for good with nothing behind it as undeliverable (the job still reports)", async () => {
    const github = recorder();
    const { outbox } = await openOutbox({ deliver: github.deliver, pusher: async () => Promise.reject(refused("protected branch")) });
    const story = newStory();
    await outbox.put(story, "comment:before", comment("before"));
    await outbox.put(story, "push", PUSH);
    expect(await outbox.deliverNow(story, "push", 3)).toBe("undeliverable");
    expect(github.titles()).toEqual(["comment:before"]);
    expect(outbox.list().map((entry) => [entry.slot, entry.state, entry.lastError])).toEqual([["push", "undeliverable", "protected branch"]]);
    await outbox.close();
  });

  it("keeps a retired story retired when its refused push's notices are recorded", async () => {
    const github = recorder();
    const { outbox } = await openOutbox({ deliver: github.deliver, pusher: async () => Promise.reject(refused("declined")) });
    const story = newStory();
    await outbox.put(story, "push", PUSH);
    await outbox.put(story, "check:story", checkOn(OLD_HEAD, "Completed", "completed"));
    outbox.forget(story);
    await outbox.flush(story);
    await outbox.flush(story);
    expect(github.titles()).toEqual(["Blocked: push-refused", "label:blocked", `comment:push-refused:${PUSH.sha}`]);
    // Delivered writes of a retired story leave memory.
    expect(outbox.held()).toBe(0);
    await outbox.close();
  });
});

describe("the outbox's slots", () => {
  it("tries a slot at most the times asked, stops at once when told to, and answers for an empty slot after a pass", async () => {
    const github = recorder();
    github.refuseWith(() => Object.assign(new Error("Bad gateway"), { status: 502 }));
    const { outbox } = await openOutbox({ deliver: github.deliver });
    const story = newStory();
    await outbox.put(story, "comment:a", comment("a"));
    expect(await outbox.deliverNow(story, "comment:a", 3)).toBe("pending");
    expect(outbox.list()[0]?.attempts).toBe(3);
    const stop = new AbortController();
    stop.abort();
    expect(await outbox.deliverNow(story, "comment:a", 10, stop.signal)).toBe("pending");
    expect(outbox.list()[0]?.attempts).toBe(4);
    expect(await outbox.deliverNow(story, "comment:none", 3)).toBeUndefined();
    github.refuseWith(undefined);
    expect(await outbox.deliverNow(story, "comment:a", 3)).toBe("delivered");
    // A slot not recorded, once a pass delivered the story's writes: nothing to say of it.
    expect(await outbox.deliverNow(story, "comment:a", 3)).toBeUndefined();
    await outbox.close();
    // Closed: deliverNow tries nothing more.
    await outbox.put(story, "comment:b", comment("b"));
    expect(await outbox.deliverNow(story, "comment:b", 3)).toBe("pending");
    expect(github.titles()).toEqual(["comment:a"]);
  });

  it("gives a slot's newer state the rate limit its older one was told, and sends nothing before it", async () => {
    const github = recorder();
    github.refuseWith(() => Object.assign(new Error("rate limited"), { status: 429, response: { headers: { "retry-after": "3600" } } }));
    let now = Date.parse("2026-12-05T10:00:00.000Z");
    const { outbox } = await openOutbox({ deliver: github.deliver, now: () => now });
    const story = newStory();
    await outbox.put(story, "comment:a", comment("one"));
    await outbox.flush(story);
    github.refuseWith(undefined);
    await outbox.put(story, "comment:a", comment("two"));
    expect(outbox.list()[0]?.nextAt).toBe("2026-12-05T11:00:00.000Z");
    await outbox.flush(story);
    expect(github.sent).toEqual([]);
    now += 3_600_000;
    await outbox.flush(story);
    expect(github.sent.map((entry) => entry.write)).toEqual([comment("two")]);
    await outbox.close();
  });

  it("holds a story's later writes behind one that must wait, and delivers another story's meanwhile", async () => {
    const github = recorder();
    github.refuseWith((entry) => (entry.slot === "comment:a" ? Object.assign(new Error("down"), { status: 500 }) : undefined));
    const { outbox } = await openOutbox({ deliver: github.deliver });
    const first = newStory();
    const second = newStory();
    await outbox.put(first, "comment:a", comment("a"));
    await outbox.put(first, "comment:b", comment("b"));
    await outbox.put(second, "comment:c", comment("c"));
    await outbox.flush(first);
    await outbox.flush(second);
    expect(github.titles()).toEqual(["comment:c"]);
    expect(outbox.hasPending(first)).toBe(true);
    expect(outbox.hasPending(second)).toBe(false);
    expect(outbox.hasPending()).toBe(true);
    expect(outbox.list().map((entry) => entry.slot)).toEqual(["comment:a", "comment:b"]);
    github.refuseWith(undefined);
    await outbox.flush(first);
    expect(github.titles()).toEqual(["comment:c", "comment:a", "comment:b"]);
    expect(outbox.hasPending()).toBe(false);
    await outbox.close();
  });

  it("discards a slot's write for good, from memory and disk", async () => {
    const github = recorder();
    github.refuseWith(() => Object.assign(new Error("down"), { status: 500 }));
    const { outbox, dir } = await openOutbox({ deliver: github.deliver });
    const story = newStory();
    await outbox.put(story, "comment:a", comment("a"));
    await outbox.flush(story);
    expect(files(dir)).toHaveLength(1);
    await outbox.discard(story, "comment:a");
    await outbox.discard(story, "comment:none");
    expect([outbox.list(), files(dir), outbox.held()]).toEqual([[], [], 0]);
    await outbox.close();
  });

  it("does not send a delivered write again when its record cannot be kept, and says so", async () => {
    const github = recorder();
    const { outbox, log, dir } = await openOutbox({ deliver: github.deliver });
    const story = newStory();
    await outbox.put(story, "check:story", checkOn(OLD_HEAD, "Running"));
    // The disk refuses from now on: the folder is a file.
    rmSync(dir, { recursive: true });
    writeFileSync(dir, "");
    await outbox.flush(story);
    await outbox.flush(story);
    expect(github.titles()).toEqual(["Running"]);
    expect(log.lines.filter((line) => line.level === "warn").map((line) => line.message)).toEqual(["outbox: could not record a delivered write"]);
    await outbox.close();
  });

  it("delivers due writes by itself once started, and a write recorded while closed never", async () => {
    const github = recorder();
    const { outbox, dir } = await openOutbox({ deliver: github.deliver, tickMs: 5 });
    const story = newStory();
    await outbox.put(story, "comment:a", comment("a"));
    outbox.start();
    outbox.start();
    // Delivered, and its file removed after.
    await eventually("the write delivered by the timer", () => (github.sent.length === 1 && files(dir).length === 0 ? true : undefined));
    await outbox.close();
    await outbox.put(story, "comment:b", comment("b"));
    outbox.start();
    await outbox.drain(1000);
    expect(github.titles()).toEqual(["comment:a"]);
    expect(files(dir)).toHaveLength(1);
  });

  it("reports the tokens its octokits were given, or none", async () => {
    const github = recorder();
    const { outbox: without } = await openOutbox({ deliver: github.deliver });
    expect(without.secretsSeen()).toEqual([]);
    const { outbox: withTokens } = await openOutbox({ deliver: github.deliver, secretsSeen: () => ["ghs_token"] });
    expect(withTokens.secretsSeen()).toEqual(["ghs_token"]);
    await without.close();
    await withTokens.close();
  });
});
