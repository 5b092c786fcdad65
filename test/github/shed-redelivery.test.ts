/**
 * Nothing shed is lost, end to end through a real Probot and the strict fake GitHub: with the
 * door's two slots held by enqueues the test stalls, a burst of `issues.labeled` deliveries is
 * shed (503, recorded by the fake); once the enqueues go on and shedding stops, the App asks
 * GitHub to redeliver what failed, and every story is enqueued exactly once. The status page
 * shows the shed delivery ids and the sweeps' results meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { DoorStatus } from "../../src/github/door/index.js";
import { schemas } from "../../src/schema/index.js";
import type { GatedQueue } from "../support/gated-queue.js";
import type { FakeGitHub, HookDeliveryRecord } from "../support/fake-github/index.js";
import { eventually } from "../support/poll.js";
import { startGatedApp, type GatedApp } from "./gated-app.js";

let app: GatedApp;
let gh: FakeGitHub;
let queue: GatedQueue;

beforeAll(async () => {
  app = await startGatedApp("harness-shed-", {
    maxInflight: 2,
    // Every delivery comes from the fake's one address: the per-client limit is the global one here.
    maxInflightPerClient: 2,
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
    const door = async (): Promise<DoorStatus> => {
      const found = (await app.status()).door;
      expect(schemas().issues("status-webhook-door", found)).toEqual([]);
      return found as DoorStatus;
    };
    const startUp = await eventually("the start-up sweep's result on the status page", async () => (await door()).redelivery?.last);
    expect(startUp).toEqual({ listed: 0, asked: 0, failed: 0, complete: true, endedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect((await door()).shed).toEqual({ total: 0, shedding: false, recentIds: [] });
    const held = [app.labelStory("held 1"), app.labelStory("held 2")];
    await eventually("both held deliveries at the enqueue", () => (queue.arrived.length === 2 ? true : undefined));
    const burst = await Promise.all(Array.from({ length: 6 }, (_, index) => app.labelStory(`burst ${index + 1}`)));
    expect(burst.map((record) => record.statusCode)).toEqual([503, 503, 503, 503, 503, 503]);
    expect(queue.arrived).toHaveLength(2);
    // The status page names what was shed (a sweep that ran before the gate opened may have had its redeliveries shed too: same GUIDs).
    // A shed delivery's id is kept once its body, drained after the 503, verified.
    const guids = new Set(burst.map((record) => record.guid));
    const shed = await eventually("every shed id verified", async () => {
      const found = (await door()).shed;
      return guids.size === new Set(found.recentIds).size ? found : undefined;
    });
    expect(new Set(shed.recentIds)).toEqual(guids);
    expect(shed.total).toBe(shed.recentIds.length);
    const page = await app.statusPage();
    expect(page).toContain(`<h2>Webhook door (${shed.total} shed)</h2>`);
    for (const record of burst) expect(page).toContain(record.guid);

    queue.release();
    expect((await Promise.all(held)).map((record) => record.statusCode)).toEqual([200, 200]);
    // Shedding stops; the sweep asks GitHub for the six again; the fake redelivers them.
    await eventually("every story enqueued", () => (queue.outcomes.length === 8 ? true : undefined));
    await gh.webhooksIdle();
    // The sweep that asked is on the status page once it ended, and shedding has stopped.
    const asked = await eventually("the asking sweep's result on the status page", async () => {
      const now = await door();
      return !now.shed.shedding && now.redelivery?.running === false && (now.redelivery.last?.asked ?? 0) > 0 ? now.redelivery.last : undefined;
    });
    expect(asked).toMatchObject({ failed: 0, complete: true });
    expect(asked?.listed).toBeGreaterThanOrEqual(6);

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
    expect(asks.map((request) => request.status)).toEqual(
      gh
        .hookDeliveries()
        .filter((record) => record.redelivery)
        .map(() => 202),
    );
    expect(asks.length).toBeGreaterThanOrEqual(6);

    // A later sweep (say, at the next start) finds nothing left to ask for, and a repeated delivery is one job.
    const again = gh.hookDeliveries().find((record) => record.guid === burst[0]?.guid && record.redelivery);
    await gh.context.hook.redeliver(again?.id ?? 0);
    expect(queue.outcomes.at(-1)?.outcome).toEqual({ accepted: false, reason: "duplicate-delivery" });
    expect(await queue.snapshot()).toHaveLength(8);
    gh.assertNoUnexpectedRequests();
  });
});
