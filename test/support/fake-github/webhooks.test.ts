import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createNodeMiddleware, createProbot, type Probot } from "probot";
import { fakeOctokit } from "./client.js";
import { until } from "../poll.js";
import {
  checkRunRequestedActionPayload,
  deliverWebhook,
  issueCommentCreatedPayload,
  issuesLabeledPayload,
  signedDelivery,
  startFakeGitHub,
  type FakeGitHub,
} from "./index.js";

const OWNER = "octo-org";
const NAME = "hooks";
let gh: FakeGitHub;
let app: Server;
let webhookUrl: string;
const received: { event: string; payload: Record<string, unknown> }[] = [];

beforeAll(async () => {
  gh = await startFakeGitHub();
  await gh.addRepository({ owner: OWNER, name: NAME, files: { ".github/harness.yml": "story_label: story\n" } });
  // A real Probot, configured exactly as the App is against GitHub Enterprise Server.
  const probot: Probot = createProbot({
    env: {
      APP_ID: String(gh.appId),
      PRIVATE_KEY: gh.privateKey,
      WEBHOOK_SECRET: gh.webhookSecret,
      GHE_HOST: gh.host,
      GHE_PROTOCOL: "http",
      LOG_LEVEL: "fatal",
    },
  });
  const middleware = await createNodeMiddleware(
    (probotApp) => {
      probotApp.on("issues.labeled", async (context) => {
        received.push({ event: "issues.labeled", payload: context.payload as unknown as Record<string, unknown> });
        const config = await context.config<{ story_label?: string }>("harness.yml");
        await context.octokit.rest.issues.createComment(context.issue({ body: `label ${context.payload.label?.name} (configured: ${config?.story_label})` }));
      });
      probotApp.on(["issue_comment.created", "check_run.requested_action"], (context) => {
        received.push({ event: context.name, payload: context.payload as unknown as Record<string, unknown> });
      });
    },
    { probot, webhooksPath: "/api/github/webhooks" },
  );
  app = createServer((request, response) => {
    void middleware(request, response, () => {
      response.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  webhookUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/api/github/webhooks`;
});

afterAll(async () => {
  app.closeAllConnections();
  await new Promise((resolve) => app.close(resolve));
  await gh.close();
});

afterEach(() => {
  expect(gh.takeUnexpectedRequests()).toEqual([]);
});

describe("fake GitHub: webhook helpers against a real Probot", () => {
  it("delivers a signed issues.labeled built from GitHub's example; Probot's handler reads config and comments through the fake", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Story", user: "alice" });
    const payload = issuesLabeledPayload(gh, { owner: OWNER, name: NAME, number: issue.number, label: "story", sender: "alice" });
    const answer = await deliverWebhook(webhookUrl, signedDelivery("issues", payload, gh.webhookSecret));
    expect(answer.status).toBeLessThan(300);
    await until("the handler's comment", () => gh.state.comments.some((comment) => comment.issueNumber === issue.number), 10_000);
    expect(gh.state.comments.find((comment) => comment.issueNumber === issue.number)).toMatchObject({
      body: "label story (configured: story)",
      user: gh.botLogin,
    });
    const seen = received.find((delivery) => delivery.event === "issues.labeled")?.payload as Record<string, Record<string, unknown>>;
    expect(seen.repository).toMatchObject({ full_name: `${OWNER}/${NAME}`, clone_url: `${gh.url}/${OWNER}/${NAME}.git` });
    expect(seen.installation).toMatchObject({ id: gh.installationId });
    expect(seen.issue).toMatchObject({ number: issue.number, labels: [expect.objectContaining({ name: "story" })] });
    expect(seen.organization).toBeUndefined();
  });

  it("is refused by Probot with a wrong signature", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Forged", user: "mallory" });
    const payload = issuesLabeledPayload(gh, { owner: OWNER, name: NAME, number: issue.number, label: "story", sender: "mallory" });
    const answer = await deliverWebhook(webhookUrl, signedDelivery("issues", payload, "not-the-secret"));
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(received.filter((delivery) => (delivery.payload.issue as { number: number }).number === issue.number)).toEqual([]);
  });

  it("builds issue_comment.created and check_run.requested_action payloads on the fake's objects", async () => {
    const issue = gh.createIssue(OWNER, NAME, { title: "Another", user: "alice" });
    const comment = gh.addComment(OWNER, NAME, issue.number, { body: "/harness retry-blocked", user: "bob" });
    const delivery = signedDelivery("issue_comment", issueCommentCreatedPayload(gh, { owner: OWNER, name: NAME, comment }), gh.webhookSecret);
    expect(delivery.headers["x-github-delivery"]).toMatch(/^[0-9a-f-]{36}$/);
    expect((await deliverWebhook(webhookUrl, delivery)).status).toBeLessThan(300);
    await until("the issue_comment delivery", () => received.some((entry) => entry.event === "issue_comment"), 10_000);
    const commented = received.find((entry) => entry.event === "issue_comment")?.payload as Record<string, Record<string, unknown>>;
    expect(commented.comment).toMatchObject({ id: comment.id, body: "/harness retry-blocked", user: { login: "bob" } });
    expect(commented.sender).toMatchObject({ login: "bob" });

    const octokit = fakeOctokit(gh, { token: gh.mintToken() });
    const sha = (await gh.branchHead(OWNER, NAME, "main")) ?? "";
    const run = await octokit.rest.checks.create({
      owner: OWNER,
      repo: NAME,
      name: "harness / story",
      head_sha: sha,
      conclusion: "failure",
      output: { title: "Blocked", summary: "s" },
    });
    const payload = await checkRunRequestedActionPayload(gh, { owner: OWNER, name: NAME, checkRunId: run.data.id, identifier: "retry-blocked", sender: "bob" });
    expect((await deliverWebhook(webhookUrl, signedDelivery("check_run", payload, gh.webhookSecret))).status).toBeLessThan(300);
    await until("the check_run delivery", () => received.some((entry) => entry.event === "check_run"), 10_000);
    const pressed = received.find((entry) => entry.event === "check_run")?.payload as Record<string, Record<string, unknown>>;
    expect(pressed.requested_action).toEqual({ identifier: "retry-blocked" });
    expect(pressed.check_run).toMatchObject({ id: run.data.id, head_sha: sha, name: "harness / story" });
  });
});
