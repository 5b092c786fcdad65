/**
 * The door's way to the trigger handlers: a delivery's installation octokit is built only when a
 * handler first asks for one (a label never does before its answer), once per delivery however
 * often it is used, and it works as Probot's context's would: authenticated as the installation,
 * each request carrying the delivery's id.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createProbot } from "probot";
import { deliverWebhook, issueCommentCreatedPayload, issuesLabeledPayload, signedDelivery, type FakeGitHub } from "../support/fake-github/index.js";
import { doorEvent, installationOctokit, TRIGGER_HANDLERS, triggerOf, type AppAuth } from "../../src/github/triggers/index.js";
import { until } from "../support/poll.js";
import { triggerDepsEach } from "../support/trigger-deps.js";
import { NAME, OWNER, RecordingLog } from "./fake-setup.js";
import { startGatedApp, type GatedApp } from "./gated-app.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";

const gh = useFakeGitHub();
let auth: AppAuth;

beforeAll(async () => {
  await gh.addRepository({ owner: OWNER, name: NAME, files: { "README.md": "# demo\n" } });
  gh.setPermission(OWNER, NAME, "writer", "write");
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
  auth = probot.auth.bind(probot);
});

/** Probot's `auth`, counting the octokits asked of it by installation id. */
function countingAuth(): { auth: AppAuth; calls: Array<number | undefined> } {
  const calls: Array<number | undefined> = [];
  return { calls, auth: (installationId) => (calls.push(installationId), auth(installationId)) };
}

/** The API requests made for a delivery (its installation token's, fetched when none is cached yet, left out). */
function requestsFor(fake: FakeGitHub, delivery: string): string[] {
  return fake.state.requests
    .filter((request) => request.delivery === delivery)
    .map((request) => `${request.method} ${request.route ?? request.path}`)
    .filter((route) => !route.includes("access_tokens"));
}
const requestsOf = (delivery: string): string[] => requestsFor(gh, delivery);

describe("triggerOf", () => {
  it("names the deliveries the App acts on, and nothing else", () => {
    expect(triggerOf("issues", { action: "labeled" })).toBe("issues.labeled");
    expect(triggerOf("issue_comment", { action: "created" })).toBe("issue_comment.created");
    expect(triggerOf("check_run", { action: "requested_action" })).toBe("check_run.requested_action");
    expect(triggerOf("issues", { action: "opened" })).toBeUndefined();
    expect(triggerOf("issue_comment", { action: "edited" })).toBeUndefined();
    expect(triggerOf("ping", { zen: "Keep it logically awesome." })).toBeUndefined();
    expect(triggerOf("issues", null)).toBeUndefined();
    // Inherited names are not handlers.
    expect(triggerOf("constructor", {})).toBeUndefined();
    expect(triggerOf("toString", { action: undefined })).toBeUndefined();
  });
});

describe("a delivery's octokit, on demand", () => {
  const triggers = triggerDepsEach(
    "harness-route-queue-",
    () => gh,
    () => new RecordingLog(),
  );

  it("is never built for a label: the story is enqueued without a GitHub request", async () => {
    const counting = countingAuth();
    const issue = gh.createIssue(OWNER, NAME, { title: "Lazy", user: "writer" });
    const delivery = {
      id: "delivery-label",
      payload: issuesLabeledPayload(gh, { owner: OWNER, name: NAME, number: issue.number, label: "story", sender: "writer" }),
    };
    const outcome = await TRIGGER_HANDLERS["issues.labeled"](doorEvent(counting.auth, delivery), triggers.deps);
    expect(outcome).toMatchObject({ action: "enqueued" });
    expect(counting.calls).toEqual([]);
    expect(requestsOf("delivery-label")).toEqual([]);
  });

  it("is built once, as the installation, when a command needs GitHub; every request carries the delivery id", async () => {
    const counting = countingAuth();
    const issue = gh.createIssue(OWNER, NAME, { title: "Helpful", user: "writer" });
    const comment = gh.addComment(OWNER, NAME, issue.number, { body: "/harness help", user: "writer" });
    const delivery = { id: "delivery-help", payload: issueCommentCreatedPayload(gh, { owner: OWNER, name: NAME, comment }) };
    const outcome = await TRIGGER_HANDLERS["issue_comment.created"](doorEvent(counting.auth, delivery), triggers.deps);
    expect(outcome).toEqual({ action: "replied", reason: "help" });
    // The permission check and the reply: two requests, one octokit, the delivery's installation.
    expect(counting.calls).toEqual([gh.installationId]);
    expect(requestsOf("delivery-help")).toEqual([
      "GET /repos/{owner}/{repo}/collaborators/{username}/permission",
      "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
    ]);
    expect(
      gh.state.comments
        .filter((entry) => entry.issueNumber === issue.number)
        .map((entry) => entry.body)
        .at(-1),
    ).toContain("/harness");
  });

  it("refuses to be built for a delivery without an installation, whose handler never asks", async () => {
    const counting = countingAuth();
    const issue = gh.createIssue(OWNER, NAME, { title: "Nowhere", user: "writer" });
    const payload = issuesLabeledPayload(gh, { owner: OWNER, name: NAME, number: issue.number, label: "story", sender: "writer" });
    delete payload.installation;
    const outcome = await TRIGGER_HANDLERS["issues.labeled"](doorEvent(counting.auth, { id: "delivery-none", payload }), triggers.deps);
    expect(outcome).toEqual({ action: "ignored", reason: "no-installation" });
    await expect(installationOctokit(counting.auth, payload, "delivery-none")()).rejects.toThrow("the delivery names no installation to act as");
    await expect(installationOctokit(counting.auth, null, "delivery-null")()).rejects.toThrow("the delivery names no installation to act as");
    expect(counting.calls).toEqual([]);
  });
});

describe("through the App's door", () => {
  let app: GatedApp;

  beforeAll(async () => {
    app = await startGatedApp("harness-route-door-", { redeliver: false });
    app.gh.setPermission(OWNER, NAME, "writer", "write");
  });

  afterAll(async () => {
    await app.close();
  });

  it("answers a label with no request made for it, and a command with its octokit's requests carrying the delivery id", async () => {
    const door = app.gh;
    const labelled = door.createIssue(OWNER, NAME, { title: "Door", user: "writer" });
    const label = signedDelivery(
      "issues",
      issuesLabeledPayload(door, { owner: OWNER, name: NAME, number: labelled.number, label: "story", sender: "writer" }),
      door.webhookSecret,
    );
    app.queue.release();
    expect((await deliverWebhook(app.webhookUrl, label)).status).toBe(200);
    expect(app.queue.arrived.map((job) => job.deliveryId)).toEqual([label.id]);

    const comment = door.addComment(OWNER, NAME, labelled.number, { body: "/harness help", user: "writer" });
    const help = signedDelivery("issue_comment", issueCommentCreatedPayload(door, { owner: OWNER, name: NAME, comment }), door.webhookSecret);
    expect((await deliverWebhook(app.webhookUrl, help)).status).toBe(200);
    // The reply goes out after the answer.
    await until("the reply posted", () => requestsFor(door, help.id).some((route) => route.startsWith("POST")), 30_000);
    expect(requestsFor(door, label.id)).toEqual([]);
    expect(requestsFor(door, help.id)).toEqual([
      "GET /repos/{owner}/{repo}/collaborators/{username}/permission",
      "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
    ]);
    expect(door.takeUnexpectedRequests()).toEqual([]);
  });
});
