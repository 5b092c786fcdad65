/**
 * A new story's draft pull request is opened while its worktree provisions and its agents run:
 * the fake GitHub holds the draft's creation at a gate, the pipeline goes on meanwhile, and its
 * reports reach GitHub once the pull request is there, in order, the announcement after the
 * first check run. Should GitHub refuse the draft, the pipeline is stopped, nothing is pushed,
 * and the issue says the story could not start.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { jest } from "@jest/globals";
import { JOURNAL_FILE } from "../../src/pipeline/index.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";
import { eventually } from "../support/poll.js";
import { AGENT_SCRIPT, harnessYml, pendingOutboxWrites, storyRunsDir } from "../e2e/scenario.js";
import { recordingLog } from "./recording-log.js";
import { realRunner, storyLease } from "./real-runner.js";
import { outboxFixture } from "../support/outbox-fixture.js";

jest.setTimeout(240_000);

const PULLS = (name: string) => new RegExp(`^/api/v3/repos/acme/${name}/pulls$|^/repos/acme/${name}/pulls$`);

describe("a new story's draft pull request opens beside its pipeline", () => {
  const { log } = recordingLog();
  const fx = outboxFixture("harness-draft-overlap-", log);

  /** A repository whose implementer waits for `release` in its markers folder, an issue, and the job's lease. */
  async function story(name: string) {
    const markers = join(fx.root, `markers-${name}`);
    mkdirSync(markers, { recursive: true });
    const repo = await fx.fake.addRepository({
      owner: "acme",
      name,
      files: { "README.md": `# ${name}\n`, ".github/harness.yml": harnessYml({ markers }), ".harness-test/agent.sh": AGENT_SCRIPT },
    });
    const issue = fx.fake.createIssue("acme", name, { title: "Open it beside", body: "", user: "acme" });
    const home = join(fx.root, `home-${name}`);
    const journal = (): string => {
      const runs = storyRunsDir(home, name, issue.number);
      const [run] = existsSync(runs) ? readdirSync(runs) : [];
      return run === undefined ? "" : readFileSync(join(runs, run, JOURNAL_FILE), "utf8");
    };
    return {
      number: issue.number,
      home,
      markers,
      journal,
      lease: storyLease(fx.fake, { name, number: issue.number, repository: repo, title: "Open it beside" }),
      // The markers folder is the implementer's to write: the operator's grant, as in the App's tests.
      sandbox: sandboxFromEnv({ ...process.env, HARNESS_SANDBOX_WRITE: markers }),
    };
  }

  const requestsTo = (name: string) => fx.fake.state.requests.filter((request) => request.path.includes(`/repos/acme/${name}/`));

  it("runs the worktree and the implementer while GitHub still opens the draft, then reports in order", async () => {
    const s = await story("beside");
    const outbox = await fx.openOutbox(s.home);
    const gate = fx.holdRequests({ method: "POST", path: PULLS("beside") });
    let ended = false;
    const job = realRunner(fx.fake, s.home, log, { outbox, sandbox: s.sandbox })(s.lease, new AbortController().signal).then(() => {
      ended = true;
    });
    await eventually("the draft's creation to reach GitHub's gate", () => (gate.waiting === 1 ? true : undefined));
    // Provisioning ran and the implementer started while the pull request did not exist yet.
    await eventually("the implementer to start", () => (existsSync(join(s.markers, "started")) ? true : undefined));
    expect(s.journal()).toContain('"kind":"provision.succeeded"');
    expect(fx.fake.state.pulls.filter((pull) => pull.repo === "acme/beside")).toEqual([]);
    expect(fx.fake.state.checkRuns.filter((run) => run.repo === "acme/beside")).toEqual([]);
    expect(ended).toBe(false);

    gate.open();
    writeFileSync(join(s.markers, "release"), "");
    await job;
    await eventually("the outbox to deliver everything", () => (pendingOutboxWrites(s.home).length === 0 && !outbox.hasPending() ? true : undefined));
    const [pull] = fx.fake.state.pulls.filter((candidate) => candidate.repo === "acme/beside");
    expect(pull?.draft).toBe(false);
    expect(fx.fake.state.checkRuns.filter((run) => run.repo === "acme/beside" && run.status !== "completed")).toEqual([]);
    const head = (await fx.fake.branchHead("acme", "beside", `harness/story-${s.number}`))!;
    expect(fx.fake.state.checkRuns.find((run) => run.repo === "acme/beside" && run.headSha === head && run.name === "harness / story")?.conclusion).toBe(
      "success",
    );
    // The pull request first, then the first check run, then the announcement on the issue.
    const requests = requestsTo("beside");
    const opened = requests.findIndex((request) => request.method === "POST" && PULLS("beside").test(request.path) && request.status === 201);
    const firstCheck = requests.findIndex((request) => request.method === "POST" && request.path.endsWith("/check-runs"));
    const announced = requests.findIndex(
      (request) =>
        request.method === "POST" && request.path.endsWith(`/issues/${s.number}/comments`) && JSON.stringify(request.body).includes(`#${pull!.number}`),
    );
    expect([opened > -1, opened < firstCheck, firstCheck < announced]).toEqual([true, true, true]);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("stops the pipeline when GitHub refuses the draft, pushes nothing, and says on the issue that the story could not start", async () => {
    const s = await story("refused");
    const outbox = await fx.openOutbox(s.home);
    const gate = fx.holdRequests({ method: "POST", path: PULLS("refused") });
    const job = realRunner(fx.fake, s.home, log, { outbox, sandbox: s.sandbox })(s.lease, new AbortController().signal);
    await eventually("the implementer to start while the draft waits", () => (existsSync(join(s.markers, "started")) && gate.waiting === 1 ? true : undefined));
    const startCommit = await fx.fake.branchHead("acme", "refused", `harness/story-${s.number}`);
    // GitHub answers the held request with a refusal; the implementer is never released.
    fx.injectFailure({ method: "POST", path: PULLS("refused"), failure: { kind: "refused", status: 422, message: "Validation Failed" } });
    gate.open();
    await job;
    await eventually("the outbox to deliver everything", () => (pendingOutboxWrites(s.home).length === 0 && !outbox.hasPending() ? true : undefined));
    expect(fx.fake.state.pulls.filter((pull) => pull.repo === "acme/refused")).toEqual([]);
    // The story never finished: its implementer was stopped, and the branch is still the start commit.
    expect(s.journal()).not.toContain('"kind":"story.completed"');
    expect(await fx.fake.branchHead("acme", "refused", `harness/story-${s.number}`)).toBe(startCommit);
    expect(fx.fake.state.checkRuns.filter((run) => run.repo === "acme/refused")).toEqual([]);
    const comments = fx.fake.state.commentsOn("acme", "refused", s.number).map((comment) => comment.body);
    expect(comments).toEqual([expect.stringContaining("could not start")]);
    expect(comments[0]).toContain("Validation Failed");
    fx.fake.assertNoUnexpectedRequests();
  });
});
