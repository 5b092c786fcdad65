/**
 * Nothing shed is lost, end to end through a real Probot and the strict fake GitHub: with the
 * door's two slots held by enqueues the test stalls, a burst of `issues.labeled` deliveries is
 * shed (503, recorded by the fake); once the enqueues go on and shedding stops, the App asks
 * GitHub to redeliver what failed, and every story is enqueued exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { GatedQueue } from "../support/gated-queue.js";
import { issuesLabeledPayload, type FakeGitHub, type HookDeliveryRecord } from "../support/fake-github/index.js";
import { eventually } from "../support/poll.js";
import { NAME, OWNER } from "./fake-setup.js";
import { startGatedApp, type GatedApp } from "./gated-app.js";


let app: GatedApp;
let gh: FakeGitHub;
let queue: GatedQueue;

beforeAll(async () => {
  app = await startGatedApp("harness-shed-", {
    maxInflight: 2,
    // The held deliveries stay in flight until the test opens the gate, however slow the machine: no budget or 202 lets them go first.
    handlerBudgetMs: 600_000,
    answerWithinMs: 600_000,
  });
  ({ gh, queue } = app);
  gh.setWebhookUrl(app.webhookUrl);
});

afterAll(async () => {
  await app.close();
});

describe("a shed burst", () => {
  it("is redelivered once shedding stops: every story enqueued exactly once", async () => {
    // The start-up sweep found nothing to ask for.
    await eventually("the start-up sweep", () => (gh.state.requests.some((request) => request.route === "/app/hook/deliveries") ? true : undefined));
    const labelled = (title: string): Record<string, unknown> => {
      const issue = gh.createIssue(OWNER, NAME, { title, user: OWNER });
      return issuesLabeledPayload(gh, { owner: OWNER, name: NAME, number: issue.number, label: "story", sender: OWNER });
    };
    const held = [gh.sendWebhook("issues", labelled("held 1")), gh.sendWebhook("issues", labelled("held 2"))];
    await eventually("both held deliveries at the enqueue", () => (queue.arrived.length === 2 ? true : undefined));
    const burst = await Promise.all(Array.from({ length: 6 }, (_, index) => gh.sendWebhook("issues", labelled(`burst ${index + 1}`))));
    expect(burst.map((record) => record.statusCode)).toEqual([503, 503, 503, 503, 503, 503]);
    expect(queue.arrived).toHaveLength(2);

    queue.release();
    expect((await Promise.all(held)).map((record) => record.statusCode)).toEqual([200, 200]);
    // Shedding stops; the sweep asks GitHub for the six again; the fake redelivers them.
    await eventually("every story enqueued", () => (queue.outcomes.length === 8 ? true : undefined));
    await gh.webhooksIdle();

    const issues = queue.outcomes.map((entry) => entry.issue).sort((a, b) => a - b);
    expect(new Set(issues).size).toBe(8);
    expect(queue.outcomes.every((entry) => entry.outcome.accepted)).toBe(true);
    expect(await queue.snapshot()).toHaveLength(8);
    const byGuid = new Map<string, HookDeliveryRecord[]>();
    for (const record of gh.hookDeliveries()) byGuid.set(record.guid, [...(byGuid.get(record.guid) ?? []), record]);
    // Each shed event: its first delivery refused, then redelivered until taken (once, unless the
    // sweep ran before the test opened the gate and its redelivery was shed again), never after.
    for (const shed of burst) {
      const history = (byGuid.get(shed.guid) ?? []).map((record) => [record.redelivery, record.statusCode]);
      expect(history[0]).toEqual([false, 503]);
      expect(history.at(-1)).toEqual([true, 200]);
      expect(history.slice(1, -1).every(([redelivery, status]) => redelivery === true && status === 503)).toBe(true);
    }
    const asks = gh.state.requests.filter((request) => request.route === "/app/hook/deliveries/{delivery_id}/attempts");
    expect(asks.map((request) => request.status)).toEqual(gh.hookDeliveries().filter((record) => record.redelivery).map(() => 202));
    expect(asks.length).toBeGreaterThanOrEqual(6);

    // A later sweep (say, at the next start) finds nothing left to ask for, and a repeated delivery is one job.
    const again = gh.hookDeliveries().find((record) => record.guid === burst[0]?.guid && record.redelivery);
    await gh.context.hook.redeliver(again?.id ?? 0);
    expect(queue.outcomes.at(-1)?.outcome).toEqual({ accepted: false, reason: "duplicate-delivery" });
    expect(await queue.snapshot()).toHaveLength(8);
    gh.assertNoUnexpectedRequests();
  });
});
