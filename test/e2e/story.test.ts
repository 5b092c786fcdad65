/**
 * End to end: the App as a real HTTP server (its own process) against the strict fake GitHub,
 * real signed webhooks, real clones and pushes over git's smart HTTP, a scripted agent.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkRunRequestedActionPayload, deliverWebhook, issuesLabeledPayload, signedDelivery } from "../support/fake-github/index.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { startApp, type RunningApp } from "./app-process.js";
import {
  addStoryRepo,
  CHECK_NAMES,
  checksOn,
  commentAs,
  filesContaining,
  harnessYml,
  labelNewIssue,
  loggedDelivery,
  OWNER,
  reportsDelivered,
  STATUS_MARKER,
  storyEnd,
  storyPull,
} from "./scenario.js";

import { jest } from "@jest/globals";
import { eventually } from "../support/poll.js";

jest.setTimeout(180_000);

describe("the App end to end", () => {
  let app: RunningApp;
  let root: string;
  let home: string;

  // Declared before the fake's teardown (jest runs afterAll hooks in order): the App stops while the fake still answers.
  afterAll(async () => {
    await app?.stop();
    if (process.env.HARNESS_E2E_KEEP) process.stderr.write(`kept ${root}\n`);
    else rmSync(root, { recursive: true, force: true });
  });

  const fake = useFakeGitHub();

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-e2e-"));
    home = join(root, "home");
    // The provisioning gates below are files the test creates outside any worktree; the App's
    // sandbox is told to let steps read their folder, as an operator would (HARNESS_SANDBOX_READ).
    mkdirSync(join(root, "gates"));
    app = await startApp({ fake, home, workDir: root, env: { HARNESS_SANDBOX_READ: join(root, "gates") } });
  });

  it("label → draft PR, 👀, link comment, five check runs, status comment, PR ready; a redelivery starts nothing", async () => {
    await addStoryRepo(fake, "happy", harnessYml());
    const issue = fake.createIssue(OWNER, "happy", { title: "Greet the user", body: "Say hello.", user: OWNER });
    const payload = issuesLabeledPayload(fake, { owner: OWNER, name: "happy", number: issue.number, label: "story", sender: OWNER });
    const delivery = signedDelivery("issues", payload, fake.webhookSecret);
    expect((await deliverWebhook(app.webhookUrl, delivery)).status).toBe(200);
    expect((await deliverWebhook(app.webhookUrl, delivery)).status).toBe(200);

    const { head, story } = await storyEnd(fake, "happy", issue.number);
    expect(story.conclusion).toBe("success");
    const pull = await eventually("PR ready for review", () => {
      const found = storyPull(fake, "happy", issue.number);
      return found && !found.draft ? found : undefined;
    });
    expect(pull.title).toBe(`Story #${issue.number}: Greet the user`);
    expect(pull.body).toContain(`Closes #${issue.number}`);
    expect(pull.history[0]).toMatchObject({ draft: true });

    const checks = checksOn(fake, "happy", head);
    expect([...checks.keys()].sort()).toEqual([...CHECK_NAMES].sort());
    for (const name of CHECK_NAMES) expect([name, checks.get(name)?.status, checks.get(name)?.conclusion]).toEqual([name, "completed", "success"]);
    // In progress while the story ran (on the head it started from; its end reports, handed to the outbox, may go to the new head completed at once).
    const storyRuns = fake.state.checkRuns.filter((run) => run.repo === `${OWNER}/happy` && run.name === "harness / story");
    expect(storyRuns.flatMap((run) => [run.status, ...run.history.map((body) => body.status)]).filter(Boolean)).toContain("in_progress");

    const statusComments = fake.state.comments.filter(
      (comment) => comment.repo === `${OWNER}/happy` && comment.issueNumber === pull.number && comment.body.includes(STATUS_MARKER),
    );
    expect(statusComments).toHaveLength(1);
    expect(
      fake.state.reactions
        .filter((reaction) => reaction.repo === `${OWNER}/happy` && reaction.issueNumber === issue.number)
        .map((reaction) => reaction.content),
    ).toEqual(["eyes"]);
    expect(
      fake.state.comments.some(
        (comment) => comment.repo === `${OWNER}/happy` && comment.issueNumber === issue.number && comment.body.includes(`#${pull.number}`),
      ),
    ).toBe(true);

    // One run: one pull request created, one start.
    const creates = fake.state.requests.filter((request) => request.method === "POST" && request.path === `/api/v3/repos/${OWNER}/happy/pulls`);
    expect(creates).toHaveLength(1);
    expect(fake.state.pulls.filter((candidate) => candidate.repo === `${OWNER}/happy`)).toHaveLength(1);
    fake.assertNoUnexpectedRequests();
  });

  it("answers a webhook with a bad or missing signature with an error and queues nothing", async () => {
    await addStoryRepo(fake, "unsigned", harnessYml());
    const issue = fake.createIssue(OWNER, "unsigned", { title: "Forged", body: "", user: OWNER });
    const payload = issuesLabeledPayload(fake, { owner: OWNER, name: "unsigned", number: issue.number, label: "story", sender: OWNER });
    const forged = signedDelivery("issues", payload, "not-the-secret");
    const missing = signedDelivery("issues", payload, fake.webhookSecret);
    delete missing.headers["X-Hub-Signature-256"];
    delete missing.headers["x-hub-signature-256"];
    const forgedAnswer = await deliverWebhook(app.webhookUrl, forged);
    const missingAnswer = await deliverWebhook(app.webhookUrl, missing);
    expect(forgedAnswer.status).toBeGreaterThanOrEqual(400);
    expect(missingAnswer.status).toBeGreaterThanOrEqual(400);
    // A signed delivery after them is handled, so the two before it were answered and dropped.
    const after = await commentAs(fake, app, "unsigned", issue.number, OWNER, "/harness help");
    await loggedDelivery(app, after.deliveryId);
    // Rejected before any handler ran: no handler outcome logged, no delivery or job recorded.
    const outcomes = (await app.log()).split("\n").filter((line) => line.includes('"action"'));
    expect(outcomes.some((line) => line.includes(forged.id) || line.includes(missing.id))).toBe(false);
    const deliveries = readFileSync(join(home, "queue", "deliveries.log"), "utf8");
    expect(deliveries).not.toContain(forged.id);
    expect(deliveries).not.toContain(missing.id);
    expect(fake.state.requests.some((request) => request.path.includes(`/${OWNER}/unsigned.git`))).toBe(false);
    expect(storyPull(fake, "unsigned", issue.number)).toBeUndefined();
  });

  it("ignores the App's own comment containing the command", async () => {
    await addStoryRepo(fake, "own-comment", harnessYml());
    const issue = fake.createIssue(OWNER, "own-comment", { title: "Bot talk", body: "", user: OWNER });
    const before = fake.state.comments.length;
    const sent = await commentAs(fake, app, "own-comment", issue.number, fake.botLogin, "/harness retry-blocked");
    expect(sent.status).toBe(200);
    expect(await loggedDelivery(app, sent.deliveryId)).toMatchObject({ action: "ignored", reason: "bot" });
    expect(fake.state.comments.length).toBe(before + 1);
  });

  it("refuses /harness retry-blocked from a read-only user and clones nothing", async () => {
    await addStoryRepo(fake, "readonly", harnessYml());
    const issue = fake.createIssue(OWNER, "readonly", { title: "Not yours", body: "", user: OWNER });
    fake.addLabel(OWNER, "readonly", issue.number, "harness:blocked");
    fake.setPermission(OWNER, "readonly", "visitor", "read");
    const sent = await commentAs(fake, app, "readonly", issue.number, "visitor", "/harness retry-blocked");
    expect(await loggedDelivery(app, sent.deliveryId)).toMatchObject({ action: "replied", reason: "not-permitted" });
    // Replies go out after the webhook's answer.
    const reply = await eventually("the refusal reply", () =>
      fake.state.comments.find((comment) => comment.repo === `${OWNER}/readonly` && comment.issueNumber === issue.number && comment.user === fake.botLogin),
    );
    expect(reply.body).toMatch(/write/i);
    expect(fake.state.requests.some((request) => request.path.includes(`/${OWNER}/readonly.git`))).toBe(false);
    expect(filesContaining(home, []).some((path) => path.includes(join("repos", OWNER, "readonly")))).toBe(false);
  });

  it("fails the story check run with the validation message of an invalid .github/harness.yml", async () => {
    await addStoryRepo(fake, "bad-config", "agent:\n  command: sh agent.sh\nmax_attempts: zero\n");
    const { number, status } = await labelNewIssue(fake, app, "bad-config", "Bad config");
    expect(status).toBe(200);
    const { story } = await storyEnd(fake, "bad-config", number);
    expect(["failure", "action_required"]).toContain(story.conclusion);
    const text = `${story.output.summary ?? ""}\n${story.output.text ?? ""}`;
    expect(text).toContain(".github/harness.yml");
    expect(text).toContain("max_attempts");
    expect(text).toContain("config-invalid");
  });

  it("blocks on a provisioning failure with harness:blocked and a Retry button; a writer's retry-blocked completes it", async () => {
    const gate = join(root, "gates", "provision-ok");
    await addStoryRepo(fake, "provision", harnessYml({ provision: `test -f '${gate}'` }));
    const { number } = await labelNewIssue(fake, app, "provision", "Needs dependencies");
    const blocked = await storyEnd(fake, "provision", number);
    expect(blocked.story.conclusion).toBe("action_required");
    expect(blocked.story.actions.map((action) => action.identifier)).toContain("retry");
    expect(`${blocked.story.output.summary}${blocked.story.output.text}`).toContain("workspace-provision-failed");
    expect(checksOn(fake, "provision", blocked.head).get("harness / provision")?.conclusion).toBe("failure");
    const pull = storyPull(fake, "provision", number);
    expect(pull).toBeDefined();
    const labels = (): string[] => fake.state.issue(fake.state.repo(OWNER, "provision")!, number)?.labels ?? [];
    await eventually("harness:blocked on the issue", () => (labels().includes("harness:blocked") ? true : undefined));

    // The blocked label is among the end reports the job handed to the outbox: a retry needs it there.
    await reportsDelivered(home);
    writeFileSync(gate, "");
    fake.setPermission(OWNER, "provision", "writer", "write");
    const retry = await commentAs(fake, app, "provision", pull!.number, "writer", "/harness retry-blocked");
    expect(await loggedDelivery(app, retry.deliveryId)).toMatchObject({ action: "enqueued" });
    const done = await eventually("the re-admitted story to complete", async () => {
      const head = await fake.branchHead(OWNER, "provision", `harness/story-${number}`);
      const story = head ? checksOn(fake, "provision", head).get("harness / story") : undefined;
      return story?.conclusion === "success" ? story : undefined;
    });
    expect(done.status).toBe("completed");
    await reportsDelivered(home);
    expect(labels()).not.toContain("harness:blocked");
    expect(storyPull(fake, "provision", number)?.draft).toBe(false);
  });

  it("re-admits a blocked story when a writer presses the Retry button of its check run", async () => {
    const gate = join(root, "gates", "provision-ok-button");
    await addStoryRepo(fake, "button", harnessYml({ provision: `test -f '${gate}'` }));
    const { number } = await labelNewIssue(fake, app, "button", "Press the button");
    const blocked = await storyEnd(fake, "button", number);
    expect(blocked.story.actions).toEqual([expect.objectContaining({ label: "Retry", identifier: "retry" })]);
    // The blocked label is among the end reports the job handed to the outbox: a retry needs it there.
    await reportsDelivered(home);
    writeFileSync(gate, "");
    fake.setPermission(OWNER, "button", "writer", "write");
    const payload = await checkRunRequestedActionPayload(fake, {
      owner: OWNER,
      name: "button",
      checkRunId: blocked.story.id,
      identifier: "retry",
      sender: "writer",
    });
    const delivery = signedDelivery("check_run", payload, fake.webhookSecret);
    expect((await deliverWebhook(app.webhookUrl, delivery)).status).toBe(200);
    expect(await loggedDelivery(app, delivery.id)).toMatchObject({ action: "enqueued" });
    await eventually("the re-admitted story to complete", async () => {
      const head = await fake.branchHead(OWNER, "button", `harness/story-${number}`);
      return head && checksOn(fake, "button", head).get("harness / story")?.conclusion === "success" ? true : undefined;
    });
    await reportsDelivered(home);
    expect(storyPull(fake, "button", number)?.draft).toBe(false);
  });

  it("leaves no token in any request body, log line or file under the data directory", async () => {
    const tokens = fake.issuedTokens().map((issued) => issued.token);
    expect(tokens.length).toBeGreaterThan(0);
    const forms = tokens.flatMap((token) => [token, Buffer.from(`x-access-token:${token}`).toString("base64")]);
    for (const request of fake.state.requests) {
      const body = JSON.stringify(request.body ?? "");
      for (const form of forms) expect(body.includes(form)).toBe(false);
    }
    const log = await app.log();
    for (const form of forms) expect(log.includes(form)).toBe(false);
    expect(filesContaining(home, forms)).toEqual([]);
    // Nor the App's own credentials, which agents (whose environment dumps are under home) never get.
    const pemLine = fake.privateKey.split("\n")[5] ?? "";
    expect(pemLine.length).toBeGreaterThan(40);
    expect(filesContaining(home, [fake.webhookSecret, pemLine])).toEqual([]);
    expect(filesContaining(home, ["HARNESS_STAGE=implementer"]).length).toBeGreaterThan(0);
    fake.assertNoUnexpectedRequests();
  });
});
