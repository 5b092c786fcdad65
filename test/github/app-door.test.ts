/**
 * The App's webhook door through a real Probot: a delivery is answered while its handler still
 * waits (here on a stalled enqueue), the work completes after the answer, and a bad signature
 * never reaches a handler.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { GatedQueue } from "../support/gated-queue.js";
import { until } from "../support/poll.js";
import { deliverWebhook, issuesLabeledPayload, signedDelivery, type FakeGitHub } from "../support/fake-github/index.js";
import { NAME, OWNER } from "./fake-setup.js";
import { startGatedApp, type GatedApp } from "./gated-app.js";

let app: GatedApp;
let gh: FakeGitHub;
let queue: GatedQueue;
let webhookUrl: string;

beforeAll(async () => {
  app = await startGatedApp("harness-app-door-", { handlerBudgetMs: 200 });
  ({ gh, queue, webhookUrl } = app);
});

afterAll(async () => {
  await app.close();
});

describe("the App's webhook door", () => {
  it("refuses a bad signature before any handler, then answers a good delivery while its enqueue still waits", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Slow disk", user: OWNER });
    const payload = issuesLabeledPayload(gh, { owner: OWNER, name: NAME, number: issue.number, label: "story", sender: OWNER });
    expect((await deliverWebhook(webhookUrl, signedDelivery("issues", payload, "wrong-secret"))).status).toBe(400);
    expect(queue.arrived).toEqual([]);

    const answer = await deliverWebhook(webhookUrl, signedDelivery("issues", payload, gh.webhookSecret));
    expect(answer.status).toBe(200);
    // Answered while the job was still waiting to be written.
    expect(queue.arrived).toHaveLength(1);
    const key = queue.arrived[0]?.storyKey ?? "";
    expect(await queue.isActive(key)).toBe(false);
    queue.release();
    await until("the story active once the enqueue is released", () => queue.isActive(key), 30_000);
    expect(gh.takeUnexpectedRequests()).toEqual([]);
  });
});
