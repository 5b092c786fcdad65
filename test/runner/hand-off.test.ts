/**
 * A job hands its story's end reports to the App's durable outbox: it ends once the work is
 * pushed and every end report is recorded on disk, not once GitHub took them. The fake GitHub
 * holds the last end report (ready for review, GitHub's only GraphQL request of a story) at a
 * gate: the job ends while it waits, the reports arrive afterwards in order, a restart in
 * between delivers them, and with an outbox in memory the job still waits for them. The story's
 * reports before its end are handed off from the start: the pipeline never waits for GitHub.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { JOURNAL_FILE } from "../../src/pipeline/index.js";
import { jest } from "@jest/globals";
import { collectLocalWork, renderStatusText, reportingStories } from "../../src/status/index.js";
import type { RequestGate } from "../support/fake-github/index.js";
import { eventually } from "../support/poll.js";
import { AGENT_SCRIPT, harnessYml, pendingOutboxWrites, storyRunsDir } from "../e2e/scenario.js";
import { recordingLog } from "./recording-log.js";
import { realRunner, storyLease } from "./real-runner.js";
import { outboxFixture } from "../support/outbox-fixture.js";

jest.setTimeout(240_000);

const READY_PATH = /^\/api\/graphql$/;

describe("a job hands its end reports to the durable outbox", () => {
  const { lines, log } = recordingLog();
  const fx = outboxFixture("harness-hand-off-", log);
  const holdReady = (): RequestGate => fx.holdRequests({ method: "POST", path: READY_PATH });
  const pullOf = (name: string, number: number) =>
    fx.fake.state.pulls.find((pull) => pull.repo === `acme/${name}` && pull.headRef === `harness/story-${number}`)!;
  const storyOf = (name: string, number: number) => ({ installationId: fx.fake.installationId, owner: "acme", repo: name, issueNumber: number });

  /** A repository with the scripted agent, an issue, and the job's lease and data directory. */
  async function story(name: string) {
    const repo = await fx.fake.addRepository({
      owner: "acme",
      name,
      files: { "README.md": `# ${name}\n`, ".github/harness.yml": harnessYml(), ".harness-test/agent.sh": AGENT_SCRIPT },
    });
    const issue = fx.fake.createIssue("acme", name, { title: "Hand it off", body: "", user: "acme" });
    return {
      number: issue.number,
      home: join(fx.root, `home-${name}`),
      lease: storyLease(fx.fake, { name, number: issue.number, repository: repo, title: "Hand it off" }),
    };
  }

  /** Starts the job; `ended` turns true once it resolved. */
  function start(run: Promise<void>): { done: Promise<void>; ended: () => boolean } {
    let ended = false;
    const done = run.then(() => {
      ended = true;
    });
    return { done, ended: () => ended };
  }

  it("ends the job while GitHub still holds its end report, then delivers the reports in order", async () => {
    const { number, home, lease } = await story("handed");
    const outbox = await fx.openOutbox(home);
    const gate = holdReady();
    const job = start(realRunner(fx.fake, home, log, { outbox })(lease, new AbortController().signal));

    // The job ends before GitHub took the ready-for-review: it waits at the gate, recorded on disk.
    await eventually("the job to end while its ready-for-review is held", () => (job.ended() ? true : undefined));
    await eventually("the ready-for-review to reach GitHub's gate", () => (gate.waiting === 1 ? true : undefined));
    expect(pullOf("handed", number).draft).toBe(true);
    expect(outbox.hasPending(storyOf("handed", number))).toBe(true);
    expect(lines.some((line) => line.startsWith("info story finished") && line.includes('"reports":"outbox"') && line.includes(`acme/handed#${number}`))).toBe(
      true,
    );
    // Its push went through in the job: only the reports wait, not the push.
    expect(lines.filter((line) => line.includes("the push waits in the outbox") && line.includes(`acme/handed#${number}`))).toEqual([]);
    // `harness status` shows the story reporting: its job is done, its end reports wait in the outbox.
    const local = await collectLocalWork(home);
    expect(local.undelivered).toEqual([expect.objectContaining({ story: `acme/handed#${number}`, slot: "ready-for-review", state: "pending" })]);
    const status = { app: { running: false }, queued: [], running: [], ...local };
    const text = renderStatusText({ ...status, reporting: reportingStories(status) });
    expect(text).toContain("Reporting (1)");
    expect(text).toContain(`acme/handed#${number}  1 write(s) waiting`);

    gate.open();
    await eventually("ready for review", () => (pullOf("handed", number).draft === false ? true : undefined));
    await eventually("the outbox to deliver everything", () => (pendingOutboxWrites(home).length === 0 && !outbox.hasPending() ? true : undefined));

    // In order: the push, then the check runs on the new head, the final status comment, ready for review.
    const head = (await fx.fake.branchHead("acme", "handed", `harness/story-${number}`))!;
    const requests = fx.fake.state.requests;
    const pushed = requests.findLastIndex(
      (request) => request.method === "POST" && request.path === "/acme/handed.git/git-receive-pack" && request.status === 200,
    );
    const firstOnHead = requests.findIndex(
      (request) => request.method === "POST" && request.path.endsWith("/check-runs") && (request.body as { head_sha?: string } | undefined)?.head_sha === head,
    );
    const completed = requests.findIndex(
      (request) => request.path.includes("/repos/acme/handed/issues/") && JSON.stringify(request.body ?? "").includes("Completed"),
    );
    const ready = requests.findIndex((request) => request.method === "POST" && READY_PATH.test(request.path) && request.status === 200);
    expect(pushed).toBeGreaterThan(-1);
    expect([pushed < firstOnHead, firstOnHead < ready, completed < ready, completed > pushed]).toEqual([true, true, true, true]);
    expect(
      fx.fake.state.checkRuns
        .filter((run) => run.repo === "acme/handed" && run.headSha === head && run.name === "harness / story")
        .map((run) => run.conclusion),
    ).toEqual(["success"]);
    // The story's own check run is the last created on the new head: once it shows, the others are there.
    const createdOnHead = requests.filter(
      (request) => request.method === "POST" && request.path.endsWith("/check-runs") && (request.body as { head_sha?: string } | undefined)?.head_sha === head,
    );
    expect(createdOnHead.map((request) => (request.body as { name: string }).name).at(-1)).toBe("harness / story");
    expect(createdOnHead.length).toBeGreaterThan(1);
    expect(fx.fake.state.checkRuns.filter((run) => run.repo === "acme/handed" && run.status !== "completed")).toEqual([]);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("runs the pipeline without waiting for GitHub to take its check runs, which arrive in order afterwards", async () => {
    const { number, home, lease } = await story("unwaited");
    const outbox = await fx.openOutbox(home);
    // Every check run GitHub is asked to create waits at the gate: the story's first report does.
    const gate = fx.holdRequests({ method: "POST", path: /\/check-runs$/ });
    const job = start(realRunner(fx.fake, home, log, { outbox })(lease, new AbortController().signal));
    await eventually("the first check run to reach GitHub's gate", () => (gate.waiting >= 1 ? true : undefined));
    // The pipeline runs to its end meanwhile: its journal holds the story's completion, no check run exists yet.
    const journal = () => {
      const runs = storyRunsDir(home, "unwaited", number);
      const [run] = existsSync(runs) ? readdirSync(runs) : [];
      return run === undefined ? "" : readFileSync(join(runs, run, JOURNAL_FILE), "utf8");
    };
    await eventually("the pipeline to complete the story while its check runs wait", () => (journal().includes('"kind":"story.completed"') ? true : undefined));
    expect(fx.fake.state.checkRuns.filter((run) => run.repo === "acme/unwaited")).toEqual([]);
    expect(outbox.hasPending(storyOf("unwaited", number))).toBe(true);

    gate.open();
    await job.done;
    await eventually("the outbox to deliver everything", () => (pendingOutboxWrites(home).length === 0 && !outbox.hasPending() ? true : undefined));
    const head = (await fx.fake.branchHead("acme", "unwaited", `harness/story-${number}`))!;
    const onHead = fx.fake.state.checkRuns.filter((run) => run.repo === "acme/unwaited" && run.headSha === head);
    expect(onHead.find((run) => run.name === "harness / story")?.conclusion).toBe("success");
    expect(fx.fake.state.checkRuns.filter((run) => run.repo === "acme/unwaited" && run.status !== "completed")).toEqual([]);
    expect(pullOf("unwaited", number).draft).toBe(false);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("delivers the handed-off reports after a restart of the App", async () => {
    const { number, home, lease } = await story("restarted");
    const first = await fx.openOutbox(home);
    const gate = holdReady();
    const job = start(realRunner(fx.fake, home, log, { outbox: first })(lease, new AbortController().signal));
    await eventually("the job to end while its ready-for-review is held", () => (job.ended() ? true : undefined));
    await eventually("the ready-for-review to reach GitHub's gate", () => (gate.waiting === 1 ? true : undefined));

    // GitHub fails it instead (502), and the App stops before it could try again: the report waits on disk.
    const badGateway = fx.injectFailure({ method: "POST", path: READY_PATH, failure: { kind: "bad-gateway" } });
    gate.open();
    await eventually("the held request to be answered 502", () => (badGateway.served > 0 ? true : undefined));
    await first.close();
    expect(pendingOutboxWrites(home)).toHaveLength(1);
    expect(pullOf("restarted", number).draft).toBe(true);

    // A new App on the same data directory (a worker started again on its own disk) delivers it.
    badGateway.close();
    const second = await fx.openOutbox(home);
    await eventually("ready for review after the restart", () => (pullOf("restarted", number).draft === false ? true : undefined));
    await eventually("the outbox to empty", () => (pendingOutboxWrites(home).length === 0 && !second.hasPending() ? true : undefined));
    fx.fake.assertNoUnexpectedRequests();
  });

  it("still awaits the end reports with an outbox in memory (nothing would deliver them after the job)", async () => {
    const { number, home, lease } = await story("in-memory");
    const gate = holdReady();
    let requestsAtEnd = -1;
    const job = start(
      realRunner(
        fx.fake,
        home,
        log,
      )(lease, new AbortController().signal).then(() => {
        requestsAtEnd = fx.fake.state.requests.length;
      }),
    );
    await eventually("the ready-for-review to reach GitHub's gate", () => (gate.waiting === 1 ? true : undefined));
    // The job waits for the request GitHub holds.
    expect(job.ended()).toBe(false);
    gate.open();
    await job.done;
    expect(pullOf("in-memory", number).draft).toBe(false);
    const ready = fx.fake.state.requests.findIndex(
      (request) =>
        request.method === "POST" &&
        READY_PATH.test(request.path) &&
        request.status === 200 &&
        JSON.stringify(request.body ?? "").includes(pullOf("in-memory", number).nodeId),
    );
    expect(ready).toBeGreaterThan(-1);
    expect(ready).toBeLessThan(requestsAtEnd);
    expect(
      lines.some((line) => line.startsWith("info story finished") && line.includes(`acme/in-memory#${number}`) && !line.includes('"reports":"outbox"')),
    ).toBe(true);
    fx.fake.assertNoUnexpectedRequests();
  });
});
