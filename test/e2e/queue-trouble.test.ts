/**
 * End to end: the queue's troubles reach the operator and the story. A job file the App cannot
 * read is quarantined and told on its issue (through the outbox, past a 502); a second App on the same data directory refuses
 * to start, naming the first.
 */
import { jest } from "@jest/globals";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { startApp, type RunningApp } from "./app-process.js";
import { addStoryRepo, harnessYml, logged, OWNER } from "./scenario.js";
import { eventually } from "../support/poll.js";

jest.setTimeout(120_000);

describe("queue trouble, end to end", () => {
  let root: string;
  const apps: RunningApp[] = [];

  // Declared before the fake's teardown (jest runs afterAll hooks in order): the App stops while the fake still answers.
  afterAll(async () => {
    for (const app of apps) await app.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const fake = useFakeGitHub();

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-e2e-queue-"));
  });

  it("quarantines an unreadable job, tells its issue, and refuses a second App on the same HARNESS_HOME", async () => {
    const home = join(root, "home");
    await addStoryRepo(fake, "trouble", harnessYml());
    const issue = fake.createIssue(OWNER, "trouble", { title: "Odd job", user: OWNER });
    const repository = fake.repositoryJson(OWNER, "trouble") as { id: number; clone_url: string };
    const id = "001700000000000-000001-0000abcd";
    const job = {
      id,
      state: "queued",
      interruptions: 0,
      job: {
        storyKey: `${OWNER}/trouble#${issue.number}`,
        kind: "resurrect",
        installationId: fake.installationId,
        repository: { id: repository.id, owner: OWNER, name: "trouble", cloneUrl: repository.clone_url, defaultBranch: "main" },
        issue: { number: issue.number, title: "Odd job", body: "" },
        requestedBy: OWNER,
        deliveryId: "planted",
        enqueuedAt: new Date().toISOString(),
      },
    };
    mkdirSync(join(home, "queue", "jobs"), { recursive: true });
    writeFileSync(join(home, "queue", "jobs", `${id}.json`), JSON.stringify(job));

    // GitHub answers 502 at first: the notice waits in the outbox and is not lost.
    const badGateway = fake.injectFailure({
      method: "POST",
      path: new RegExp(`/repos/${OWNER}/trouble/issues/${issue.number}/comments$`),
      failure: { kind: "bad-gateway" },
    });
    const app = await startApp({
      fake,
      home,
      workDir: root,
      env: { HARNESS_OUTBOX_MAX_DELAY_MS: "500" },
      dotenv: { HARNESS_STATUS_TOKEN: "status-token-for-tests" },
    });
    apps.push(app);
    await eventually("the notice to meet the 502", () => (badGateway.served > 0 ? true : undefined));
    expect(readdirSync(join(home, "outbox")).filter((name) => name.endsWith(".json"))).toHaveLength(1);
    badGateway.close();
    const told = await eventually("the issue to be told", () =>
      fake.state.comments.find((comment) => comment.repo === `${OWNER}/trouble` && comment.issueNumber === issue.number && comment.body.includes("quarantine")),
    );
    expect(told.body).toContain(`queue/quarantine/${id}.json`);
    expect(fake.state.comments.filter((comment) => comment.repo === `${OWNER}/trouble` && comment.issueNumber === issue.number)).toHaveLength(1);
    expect(told.body).toContain("$.job.kind");
    expect(readdirSync(join(home, "queue", "quarantine"))).toEqual([`${id}.json`]);
    await logged(app, `${id}.json`);

    // The operator's view, behind the status token.
    const statusUrl = `http://127.0.0.1:${app.port}/harness/status.json`;
    expect((await fetch(statusUrl)).status).toBe(401);
    expect((await fetch(statusUrl, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    const status = (await (await fetch(statusUrl, { headers: { authorization: "Bearer status-token-for-tests" } })).json()) as {
      app: { running: boolean; pid: number };
      quarantined: Array<{ file: string; story?: string }>;
    };
    expect(status.app).toEqual({ running: true, pid: app.pid });
    expect(status.quarantined).toEqual([{ file: `${id}.json`, story: `${OWNER}/trouble#${issue.number}` }]);

    const second = await startApp({ fake, home, workDir: root }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(second?.message).toMatch(/exited before answering \(exit 2\)/);
    expect(second?.message).toContain(`is in use by another story-harness process (pid ${app.pid}`);
    fake.assertNoUnexpectedRequests();
  });
});
