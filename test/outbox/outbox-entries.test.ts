import { describe, expect, it } from "@jest/globals";
import { OutboxEntries } from "../../src/outbox/entries.js";
import { afterDelivery, afterFailure } from "../../src/outbox/transitions.js";
import type { OutboxEntry, OutboxStory, OutboxWrite } from "../../src/outbox/index.js";

const story = (issueNumber: number): OutboxStory => ({ installationId: 1, owner: "acme", repo: "widgets", issueNumber });
const AT = "2026-12-01T00:00:00.000Z";

function entry(issue: number, slot: string, write: OutboxWrite, state: OutboxEntry["state"] = "pending", id = `00${issue}-${slot}`): OutboxEntry {
  return { id, story: story(issue), slot, write, state, attempts: 0, writer: { pid: 1, startTime: "1" }, createdAt: AT, updatedAt: AT };
}
const check: OutboxWrite = {
  kind: "check",
  name: "harness / story",
  headSha: "a".repeat(40),
  externalId: "x",
  status: "in_progress",
  output: { title: "t", summary: "s" },
};
const comment: OutboxWrite = { kind: "comment", issueNumber: 1, body: "hi" };

describe("the outbox's entries in memory", () => {
  it("keeps a story's entries apart from another's, in the order of their ids", () => {
    const entries = new OutboxEntries();
    entries.set(entry(1, "b", check, "pending", "002"));
    entries.set(entry(1, "a", check, "pending", "001"));
    entries.set(entry(2, "a", comment, "pending", "000"));
    expect(entries.ofStory("acme/widgets#1").map((e) => e.slot)).toEqual(["a", "b"]);
    expect(entries.get(story(2), "a")?.write.kind).toBe("comment");
    expect(entries.get(story(2), "b")).toBeUndefined();
    expect(entries.ofStory("acme/widgets#2").map((e) => e.slot)).toEqual(["a"]);
    expect(entries.size).toBe(3);
    entries.delete(story(2), "a");
    expect(entries.ofStory("acme/widgets#2")).toEqual([]);
    expect(entries.size).toBe(2);
  });

  it("keeps a delivered check run's answer while the story's reporter lives, and lets go of a write no later one needs", () => {
    const entries = new OutboxEntries();
    entries.delivered({ ...entry(1, "check:a", check, "delivered"), result: { checkRunId: 7 } });
    entries.delivered(entry(1, "comment:x", comment, "delivered"));
    expect(entries.get(story(1), "check:a")?.result).toEqual({ checkRunId: 7 });
    expect(entries.get(story(1), "comment:x")).toBeUndefined();
    expect(entries.size).toBe(1);
  });

  it("keeps the status comment's answer too, and lets go of a label's", () => {
    const entries = new OutboxEntries();
    const status: OutboxWrite = { kind: "status-comment", issueNumber: 1, body: "b" };
    entries.delivered({ ...entry(1, "status-comment", status, "delivered"), result: { commentId: 3 } });
    entries.delivered(entry(1, "label:blocked", { kind: "label", label: "blocked", numbers: [1], present: true }, "delivered"));
    expect(entries.get(story(1), "status-comment")?.result).toEqual({ commentId: 3 });
    expect(entries.get(story(1), "label:blocked")).toBeUndefined();
  });

  it("changes nothing when asked to delete or retire what it does not hold", () => {
    const entries = new OutboxEntries();
    entries.set(entry(1, "a", check));
    entries.delete(story(9), "a");
    entries.delete(story(1), "none");
    entries.retire(story(9));
    expect([entries.size, entries.isRetired(story(9)), entries.get(story(1), "a")?.slot]).toEqual([1, false, "a"]);
  });

  it("retires a story: delivered entries go now, pending ones once delivered; a new run adopts it again", () => {
    const entries = new OutboxEntries();
    entries.set(entry(1, "check:a", check, "delivered"));
    entries.set(entry(1, "status-comment", { kind: "status-comment", issueNumber: 1, body: "b" }));
    entries.retire(story(1));
    expect(entries.isRetired(story(1))).toBe(true);
    expect(entries.size).toBe(1);
    entries.delivered({ ...entry(1, "status-comment", { kind: "status-comment", issueNumber: 1, body: "b" }, "delivered"), result: { commentId: 3 } });
    expect(entries.size).toBe(0);
    // Nothing left of it: the story is no longer remembered as retired either.
    expect(entries.isRetired(story(1))).toBe(false);
    entries.set(entry(1, "check:b", check));
    entries.retire(story(1));
    entries.adopt(story(1));
    entries.delivered({ ...entry(1, "check:b", check, "delivered"), result: { checkRunId: 9 } });
    expect(entries.get(story(1), "check:b")?.result).toEqual({ checkRunId: 9 });
  });

  it("retires every story at once (what an earlier process left)", () => {
    const entries = new OutboxEntries();
    entries.set(entry(1, "check:a", check, "delivered"));
    entries.set(entry(2, "check:a", check));
    entries.retireAll();
    expect(entries.all().map((e) => e.story.issueNumber)).toEqual([2]);
    expect(entries.isRetired(story(2))).toBe(true);
    entries.delivered({ ...entry(2, "check:a", check, "delivered"), result: { checkRunId: 1 } });
    expect(entries.size).toBe(0);
  });

  it("forgets a retired story that had only delivered entries at once", () => {
    const entries = new OutboxEntries();
    entries.set(entry(1, "check:a", check, "delivered"));
    entries.retire(story(1));
    expect(entries.size).toBe(0);
    expect(entries.isRetired(story(1))).toBe(false);
    expect(entries.all()).toEqual([]);
  });
});

describe("an entry's transitions", () => {
  const sent = { ...entry(1, "check:a", check), attempts: 2, nextAt: AT, lastError: "502" };

  it("is delivered when GitHub took its latest state: the retry state is cleared and the answer kept", () => {
    const next = afterDelivery(sent, sent, { checkRunId: 5 }, Date.parse("2026-12-01T01:00:00.000Z"));
    expect(next).toEqual({
      ...sent,
      state: "delivered",
      attempts: 0,
      result: { checkRunId: 5 },
      nextAt: undefined,
      lastError: undefined,
      updatedAt: "2026-12-01T01:00:00.000Z",
    });
    expect("nextAt" in next || "lastError" in next).toBe(false);
  });

  it("stays pending when a newer state arrived while the older was on its way, with the id it needs", () => {
    const newer = { ...sent, write: { ...check, status: "completed" as const } };
    const next = afterDelivery(newer, sent, { checkRunId: 5 }, 0);
    expect(next).toMatchObject({ state: "pending", write: { status: "completed" }, result: { checkRunId: 5 }, attempts: 2 });
  });

  it("keeps no empty answer", () => {
    expect("result" in afterDelivery(sent, sent, {}, 0)).toBe(false);
  });

  it("waits as told after a refusal, or becomes undeliverable", () => {
    const retry = afterFailure(sent, { retry: true, afterMs: 1500, why: "retry-after" }, 3, 1000);
    expect(retry).toMatchObject({ state: "pending", attempts: 3, lastError: "retry-after", nextAt: "1970-01-01T00:00:02.500Z" });
    const gone = afterFailure(sent, { retry: false, why: "404" }, 3, 1000);
    expect(gone).toMatchObject({ state: "undeliverable", attempts: 3, lastError: "404" });
    expect("nextAt" in gone).toBe(false);
  });
});
