/**
 * An App that does not ask for redeliveries (`redeliver: false`), through a real Probot and the
 * strict fake GitHub: the door still sheds past `maxInflight` and the status page says so, with
 * redelivery off; once shedding stops (a window of the real clock passes with nothing shed) the
 * App asks GitHub nothing and goes on serving.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { eventually } from "../support/poll.js";
import { startGatedApp, type GatedApp } from "./gated-app.js";

let app: GatedApp;

beforeAll(async () => {
  app = await startGatedApp("harness-door-off-", {
    maxInflight: 1,
    maxInflightPerClient: 1,
    redeliver: false,
    handlerBudgetMs: 600_000,
    answerWithinMs: 600_000,
  });
  app.gh.setWebhookUrl(app.webhookUrl);
});

afterAll(async () => {
  await app.close();
});

describe("the door without redelivery", () => {
  it("sheds, shows it with redelivery off, and asks GitHub nothing when shedding stops", async () => {
    const { gh, queue } = app;
    expect((await app.status()).door).toEqual({ shed: { total: 0, shedding: false, recentIds: [] } });
    const held = app.labelStory("held");
    await eventually("the held delivery at the enqueue", () => (queue.arrived.length === 1 ? true : undefined));
    const shed = await Promise.all([app.labelStory("shed 1"), app.labelStory("shed 2")]);
    expect(shed.map((record) => record.statusCode)).toEqual([503, 503]);

    // A shed delivery's id is kept once its body, drained after the 503, verified.
    const door = await eventually("both shed ids verified", async () => {
      const found = (await app.status()).door;
      return found?.shed.recentIds.length === 2 ? found : undefined;
    });
    expect(door).not.toHaveProperty("redelivery");
    expect(door.shed.total).toBe(2);
    expect([...door.shed.recentIds].sort()).toEqual(shed.map((record) => record.guid).sort());
    expect(await app.statusPage()).toContain("Redelivery: off: shed deliveries are not asked for again.");

    queue.release();
    expect((await held).statusCode).toBe(200);
    // The episode ends on the App's own clock (a second with nothing shed): no sweep follows, and the door serves.
    await eventually("shedding to stop", async () => ((await app.status()).door?.shed.shedding === false ? true : undefined));
    expect((await app.labelStory("after")).statusCode).toBe(200);
    expect(queue.outcomes).toHaveLength(2);
    expect(gh.state.requests.filter((request) => request.route?.startsWith("/app/hook/deliveries"))).toEqual([]);
    gh.assertNoUnexpectedRequests();
  });
});
