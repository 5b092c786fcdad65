/**
 * The App through a real Probot and its webhook door, in front of the strict fake GitHub, with a
 * real embedded queue whose enqueue waits at a gate the test opens ({@link GatedQueue}).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeMiddleware, createProbot } from "probot";
import { harnessApp, type HarnessAppSettings } from "../../src/app.js";
import { EmbeddedQueue } from "../../src/queue/index.js";
import type { StatusReport } from "../../src/status/index.js";
import { issuesLabeledPayload, startFakeGitHub, type FakeGitHub, type HookDeliveryRecord } from "../support/fake-github/index.js";
import { GatedQueue } from "../support/gated-queue.js";
import { NAME, OWNER } from "./fake-setup.js";

export interface GatedApp {
  gh: FakeGitHub;
  queue: GatedQueue;
  /** Where the App takes webhooks. */
  webhookUrl: string;
  /** Opens an issue titled `title` and sends its `issues.labeled` (story) delivery; resolves with the App's answer. */
  labelStory(title: string): Promise<HookDeliveryRecord>;
  /** `GET /harness/status.json`, with the token. */
  status(): Promise<StatusReport>;
  /** `GET /harness` (the HTML page), with the token. */
  statusPage(): Promise<string>;
  /** Opens the gate, closes the queue, the server and the fake, and removes the data folder. */
  close(): Promise<void>;
}

/** The App's HARNESS_STATUS_TOKEN. */
const STATUS_TOKEN = "gated-app-status-token";

/** Starts the fake (with `OWNER/NAME`), the gated queue and the App with `settings` over the defaults; enqueues only. */
export async function startGatedApp(prefix: string, settings: Partial<HarnessAppSettings>): Promise<GatedApp> {
  const gh = await startFakeGitHub();
  await gh.addRepository({ owner: OWNER, name: NAME, files: { "README.md": "# demo\n" } });
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const queue = new GatedQueue(await EmbeddedQueue.open({ dir }));
  const probot = createProbot({
    env: {
      APP_ID: String(gh.appId),
      PRIVATE_KEY: gh.privateKey,
      WEBHOOK_SECRET: gh.webhookSecret,
      GHE_HOST: gh.host,
      GHE_PROTOCOL: "http",
      LOG_LEVEL: "fatal",
    },
  });
  const all: HarnessAppSettings = {
    harnessHome: dir,
    concurrency: 1,
    agentEnvAllow: [],
    labelName: "story",
    githubThrottle: false,
    webhookSecret: gh.webhookSecret,
    statusToken: STATUS_TOKEN,
    ...settings,
  };
  const middleware = await createNodeMiddleware(harnessApp({ queue, settings: all, runJobs: false }), { probot, webhooksPath: "/api/github/webhooks" });
  const server: Server = createServer((request, response) => void middleware(request, response, () => response.writeHead(404).end()));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const get = async (path: string): Promise<Response> => {
    const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${STATUS_TOKEN}` } });
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
    return response;
  };
  return {
    gh,
    queue,
    webhookUrl: `${base}/api/github/webhooks`,
    labelStory: (title) => {
      const issue = gh.createIssue(OWNER, NAME, { title, user: OWNER });
      return gh.sendWebhook("issues", issuesLabeledPayload(gh, { owner: OWNER, name: NAME, number: issue.number, label: "story", sender: OWNER }));
    },
    status: async () => (await (await get("/harness/status.json")).json()) as StatusReport,
    statusPage: async () => (await get("/harness")).text(),
    close: async () => {
      queue.release();
      await queue.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      try {
        // The teardown of every file on the gated App: the fake refused nothing.
        gh.assertNoUnexpectedRequests();
      } finally {
        await gh.close();
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
