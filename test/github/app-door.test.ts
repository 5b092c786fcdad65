/**
 * The App's webhook door through a real Probot: a delivery is answered while its handler still
 * waits (here on a stalled enqueue), the work completes after the answer, and a bad signature
 * never reaches a handler.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeMiddleware, createProbot } from "probot";
import { harnessApp } from "../../src/app.js";
import { EmbeddedQueue } from "../../src/queue/index.js";
import { GatedQueue } from "../support/gated-queue.js";
import { deliverWebhook, issuesLabeledPayload, signedDelivery, startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.js";
import { NAME, OWNER } from "./fake-setup.js";


let gh: FakeGitHub;
let dir: string;
let queue: GatedQueue;
let server: Server;
let webhookUrl: string;

beforeAll(async () => {
  gh = await startFakeGitHub();
  await gh.addRepository({ owner: OWNER, name: NAME, files: { "README.md": "# demo\n" } });
  dir = mkdtempSync(join(tmpdir(), "harness-app-door-"));
  queue = new GatedQueue(await EmbeddedQueue.open({ dir }));
  const probot = createProbot({
    env: { APP_ID: String(gh.appId), PRIVATE_KEY: gh.privateKey, WEBHOOK_SECRET: gh.webhookSecret, GHE_HOST: gh.host, GHE_PROTOCOL: "http", LOG_LEVEL: "fatal" },
  });
  const settings = { harnessHome: dir, concurrency: 1, agentEnvAllow: [], labelName: "story", githubThrottle: false, webhookSecret: gh.webhookSecret, handlerBudgetMs: 200 };
  const middleware = await createNodeMiddleware(harnessApp({ queue, settings, runJobs: false }), { probot, webhooksPath: "/api/github/webhooks" });
  server = createServer((request, response) => void middleware(request, response, () => response.writeHead(404).end()));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  webhookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`;
});

afterAll(async () => {
  queue.release();
  await queue.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await gh.close();
  rmSync(dir, { recursive: true, force: true });
});

async function until(condition: () => Promise<boolean> | boolean): Promise<void> {
  const end = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error("condition not met before the deadline");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

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
    await until(() => queue.isActive(key));
    expect(gh.takeUnexpectedRequests()).toEqual([]);
  });
});
