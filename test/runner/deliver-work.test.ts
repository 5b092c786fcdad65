/**
 * Delivering a finished story, in-process: `deliverStoryWork` with a real repository cache, the
 * story's real branch and draft pull request on the strict fake GitHub, a real GitHub reporter
 * behind the runner's tracking reporter, and a real outbox (on disk, or in memory as a job
 * without the App's has). The branches the runner tests do not reach: a run with no new commit,
 * a blocked run that did commit work, a refused push of a blocked run or without a bundle, and
 * what is said when the outbox has no words of GitHub's to pass on.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { jest } from "@jest/globals";
import { GitHubReporter } from "../../src/github/report/index.js";
import { Outbox } from "../../src/outbox/index.js";
import { storyBranch } from "../../src/github/index.js";
import { storyGitHub, type AppOctokit } from "../../src/github/story/index.js";
import { loadWorkflow, reduceSnapshot, runStartedEvent, type HistoryEvent, type StoryOutcome } from "../../src/pipeline/index.js";
import { ensureStoryPull, pushStoryWork, syncRepoCache, TrackingReporter, UNPUSHED_BUNDLE, type StoryReporter } from "../../src/runner/index.js";
import { deliverStoryWork, PushFailedError, type DeliverArgs } from "../../src/runner/deliver-work.js";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";
import { appOctokitOf, outboxFixture } from "../support/outbox-fixture.js";
import { eventually } from "../support/poll.js";
import { recordingLog } from "./recording-log.js";

jest.setTimeout(120_000);

describe("delivering a finished story", () => {
  const { lines, log } = recordingLog();
  const fx = outboxFixture("harness-deliver-", log);

  const storyChecks = (name: string) => fx.fake.state.checkRuns.filter((run) => run.repo === `acme/${name}` && run.name === "harness / story");
  const pullOf = (name: string, number: number) =>
    fx.fake.state.pulls.find((pull) => pull.repo === `acme/${name}` && pull.headRef === `harness/story-${number}`)!;
  /** Requests of git's smart HTTP on the repository (a push, or a push's look at the refs) from `from` on. */
  const gitRequests = (name: string, from: number) => fx.fake.state.requests.slice(from).filter((request) => request.path.startsWith(`/acme/${name}.git/`));
  const readyRequests = (from: number) => fx.fake.state.requests.slice(from).filter((request) => request.method === "POST" && request.path === "/api/graphql");

  /**
   * A story as the runner has it when its pipeline ended: the repository cache, the branch and
   * draft pull request (its start commit pushed), the reporter on the pull's head and the tracker
   * that holds the end; `outbox`: the App's on disk, or one in memory (already `closed` if asked).
   */
  async function storyAtItsEnd(
    name: string,
    outboxKind: "durable" | "closed-durable" | "memory" | "closed-memory",
    reporterKind: "github" | "plain" = "github",
  ) {
    const repo = await fx.fake.addRepository({ owner: "acme", name, files: { "README.md": `# ${name}\n` } });
    const issue = fx.fake.createIssue("acme", name, { title: "Deliver it", body: "", user: "acme" });
    const home = join(fx.root, `home-${name}`);
    const appOctokit = appOctokitOf(fx.fake);
    const github = storyGitHub(
      {
        appOctokit: async () => appOctokit as AppOctokit,
        installationId: fx.fake.installationId,
        repository: { id: repo.id, owner: "acme", name },
        throttle: false,
      },
      issue.number,
    );
    await github.connect();
    const authEnv = await github.gitAuthEnv();
    const repoDir = await syncRepoCache({
      harnessHome: home,
      owner: "acme",
      name,
      cloneUrl: repo.cloneUrl,
      authEnv,
      branches: { exact: "main", prefix: storyBranch(issue.number) },
    });
    const pull = await ensureStoryPull({
      github,
      repoDir,
      defaultBranch: "main",
      issue: { number: issue.number, title: "Deliver it" },
      authEnv,
      noPullYet: true,
    });
    let outbox: Outbox;
    if (outboxKind === "durable" || outboxKind === "closed-durable") outbox = await fx.openOutbox(home);
    else outbox = await github.memoryOutbox(log, pushStoryWork);
    const story = { ...github.story, pullNumber: pull.pullNumber };
    const inner = new GitHubReporter({
      ...github.reporterTarget({ pullNumber: pull.pullNumber, issueNumber: issue.number, headSha: pull.headSha, log }),
      outbox,
    });
    // A reporter that cannot hand off, and marks the pull ready its own way (through the story's GitHub, not an outbox).
    const reporter: StoryReporter =
      reporterKind === "github"
        ? inner
        : {
            onEvent: (event, snapshot) => inner.onEvent(event, snapshot),
            setHeadSha: (sha) => inner.setHeadSha(sha),
            showPushWaiting: (push) => inner.showPushWaiting(push),
            markReadyForReview: (id) => github.markReadyForReview(id),
            handOff: async () => false,
          };
    const tracker = new TrackingReporter(reporter, (error) => log.warn({ err: String(error) }, "reporting failed"), true);
    const runDir = join(home, "runs", `run-${name}`);
    mkdirSync(runDir, { recursive: true });
    await tracker.emit({
      ...runStartedEvent({
        story: { id: `acme/${name}#${issue.number}`, title: "Deliver it" },
        runId: `run-${name}`,
        workflow: loadWorkflow(),
        readmission: false,
      }),
      at: new Date().toISOString(),
    });
    // An outbox closed as the App stops: it records, it tries nothing more.
    if (outboxKind.startsWith("closed-")) await outbox.close();

    /** The pipeline's end event, held by the tracker as in the runner. */
    const end = async (event: HistoryEvent): Promise<void> => {
      await tracker.onEvent(event, reduceSnapshot(tracker.snapshot, event));
      expect(tracker.heldEnd).toBe(event);
    };
    /** A commit of the run's on the local story branch (what the pipeline leaves there). */
    const commitWork = async (): Promise<string> => {
      const work = await git(["commit-tree", `${pull.headSha}^{tree}`, "-p", pull.headSha, "-m", "The story's work"], { cwd: repoDir, env: HARNESS_IDENTITY });
      await git(["update-ref", `refs/heads/${pull.branch}`, work], { cwd: repoDir });
      return work;
    };
    /** A run that committed work and completed: the commit, and the pipeline's end held. */
    const completeWithWork = async (): Promise<string> => {
      const work = await commitWork();
      await end({ kind: "story.completed", at: new Date().toISOString(), taskId: "story", branch: pull.branch, commit: work });
      return work;
    };
    const args = (outcome: Partial<StoryOutcome> & Pick<StoryOutcome, "status">, extra: Partial<DeliverArgs> = {}): DeliverArgs => ({
      repoDir,
      pull,
      outbox,
      story,
      repositoryId: repo.id,
      durable: outbox.durable,
      reporter: tracker,
      outcome: { branch: pull.branch, runDir, worktree: join(runDir, "worktree"), ...outcome },
      ...extra,
    });
    return {
      number: issue.number,
      home,
      repoDir,
      pull,
      outbox,
      story,
      runDir,
      tracker,
      end,
      commitWork,
      completeWithWork,
      args,
      requestsBefore: fx.fake.state.requests.length,
    };
  }

  it("pushes nothing for a completed run with no new commit, still reports its end and marks the pull ready", async () => {
    const s = await storyAtItsEnd("unchanged", "memory");
    await s.end({ kind: "story.completed", at: new Date().toISOString(), taskId: "story", branch: s.pull.branch, commit: s.pull.headSha });
    const from = fx.fake.state.requests.length;
    const end = await deliverStoryWork(s.args({ status: "completed", commit: s.pull.headSha }));
    expect(end).toEqual({ status: "completed" });
    // Nothing was pushed, nor was a push tried: git's smart HTTP never asked, and no push slot was recorded.
    expect(gitRequests("unchanged", from)).toEqual([]);
    expect(s.outbox.result(s.story, "push")).toBeUndefined();
    expect(s.outbox.list()).toEqual([]);
    expect(await fx.fake.branchHead("acme", "unchanged", s.pull.branch)).toBe(s.pull.headSha);
    // The end was released on the pull's head, and the pull is ready for review.
    expect(s.tracker.heldEnd).toBeUndefined();
    expect(storyChecks("unchanged").map((run) => [run.headSha, run.conclusion])).toEqual([[s.pull.headSha, "success"]]);
    expect(pullOf("unchanged", s.number).draft).toBe(false);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("pushes nothing for a blocked run that made no commit (no local branch either), reports the block and leaves the pull a draft", async () => {
    const s = await storyAtItsEnd("blocked-early", "durable");
    await s.end({ kind: "story.blocked", at: new Date().toISOString(), taskId: "story", failureClass: "environment", detail: "no sandbox" });
    const from = fx.fake.state.requests.length;
    const end = await deliverStoryWork(s.args({ status: "blocked", failureClass: "environment" }));
    expect(end).toEqual({ status: "blocked", failureClass: "environment", handedOff: true });
    expect(gitRequests("blocked-early", from)).toEqual([]);
    expect(s.outbox.list().filter((entry) => entry.slot === "push")).toEqual([]);
    expect(s.tracker.heldEnd).toBeUndefined();
    // Handed off: the durable outbox delivers the block after the call.
    await s.outbox.flush(s.story);
    expect(storyChecks("blocked-early").map((run) => [run.headSha, run.conclusion])).toEqual([[s.pull.headSha, "action_required"]]);
    expect(readyRequests(from)).toEqual([]);
    expect(pullOf("blocked-early", s.number).draft).toBe(true);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("pushes the work of a blocked run before its end is reported, on the new head, and does not mark it ready", async () => {
    const s = await storyAtItsEnd("blocked-work", "memory");
    const work = await s.commitWork();
    await s.end({
      kind: "story.blocked",
      at: new Date().toISOString(),
      taskId: "story",
      failureClass: "suite-failed",
      detail: "red",
      branch: s.pull.branch,
      commit: work,
    });
    const from = fx.fake.state.requests.length;
    // Without the pipeline's commit, the branch's tip is what is pushed.
    const end = await deliverStoryWork(s.args({ status: "blocked", failureClass: "suite-failed" }));
    expect(end).toEqual({ status: "blocked", failureClass: "suite-failed" });
    expect(await fx.fake.branchHead("acme", "blocked-work", s.pull.branch)).toBe(work);
    const requests = fx.fake.state.requests;
    const pushed = requests.findIndex(
      (request, index) => index >= from && request.method === "POST" && request.path === "/acme/blocked-work.git/git-receive-pack" && request.status === 200,
    );
    const blockedOnHead = requests.findIndex(
      (request, index) =>
        index >= from && request.path.includes("/check-runs") && JSON.stringify(request.body ?? "").includes('"title":"Blocked: suite-failed"'),
    );
    expect(pushed).toBeGreaterThan(-1);
    expect(blockedOnHead).toBeGreaterThan(pushed);
    expect(
      storyChecks("blocked-work")
        .filter((run) => run.headSha === work)
        .map((run) => run.conclusion),
    ).toEqual(["action_required"]);
    expect(readyRequests(from)).toEqual([]);
    expect(pullOf("blocked-work", s.number).draft).toBe(true);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("marks a completed run ready the reporter's own way when it cannot hand off", async () => {
    const s = await storyAtItsEnd("plain-reporter", "durable", "plain");
    const work = await s.completeWithWork();
    const end = await deliverStoryWork(s.args({ status: "completed", commit: work }));
    // Nothing was handed off: the reporter cannot.
    expect(end).toEqual({ status: "completed" });
    expect(await fx.fake.branchHead("acme", "plain-reporter", s.pull.branch)).toBe(work);
    expect(pullOf("plain-reporter", s.number).draft).toBe(false);
    await s.outbox.flush(s.story);
    expect(
      storyChecks("plain-reporter")
        .filter((run) => run.headSha === work)
        .map((run) => run.conclusion),
    ).toEqual(["success"]);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("says a refused push's run had been blocked, with its class, and that no bundle could be kept", async () => {
    const s = await storyAtItsEnd("refused-blocked", "memory");
    const work = await s.commitWork();
    await s.end({
      kind: "story.blocked",
      at: new Date().toISOString(),
      taskId: "story",
      failureClass: "suite-failed",
      detail: "red",
      branch: s.pull.branch,
      commit: work,
    });
    const refusal = fx.injectFailure({ method: "POST", path: /^\/acme\/refused-blocked\.git\/git-receive-pack$/, failure: { kind: "push-refused" } });
    // A run directory that is gone: the bundle cannot be written there.
    const end = await deliverStoryWork(s.args({ status: "blocked", failureClass: "suite-failed", commit: work, runDir: join(s.runDir, "gone") }));
    refusal.close();
    expect(end).toEqual({ status: "blocked", failureClass: "push-refused" });
    expect(s.outbox.list()).toEqual([]);
    const blocked = storyChecks("refused-blocked").find((run) => run.status === "completed")!;
    expect(blocked.headSha).toBe(s.pull.headSha);
    expect(blocked.output.title).toContain("push-refused");
    const said = `${blocked.output.summary}\n${blocked.output.text ?? ""}`;
    expect(said).toContain(
      `GitHub refused the push of ${work.slice(0, 12)} to ${s.pull.branch}, so the pull request does not hold this work (the run had blocked (suite-failed)).`,
    );
    expect(said).toContain("GH001: Large files detected");
    expect(said).toContain("The work could not be saved as a bundle.");
    expect(said).not.toContain(UNPUSHED_BUNDLE);
    expect(pullOf("refused-blocked", s.number).draft).toBe(true);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("blocks as push-refused with GitHub's words when GitHub answers the push 403, without trying again", async () => {
    const s = await storyAtItsEnd("forbidden", "memory");
    const work = await s.completeWithWork();
    const message = "Permission to acme/forbidden.git denied to story-harness[bot].";
    // GitHub says no when git asks for the refs to push to, with its words in the body.
    const refusal = fx.injectFailure({ method: "GET", path: /^\/acme\/forbidden\.git\/info\/refs$/, failure: { kind: "refused", status: 403, message } });
    const end = await deliverStoryWork(s.args({ status: "completed", commit: work }));
    refusal.close();
    expect(end).toEqual({ status: "blocked", failureClass: "push-refused" });
    // One try: a token minted for this push was refused; another fresh one is refused alike.
    expect(refusal.served).toBe(1);
    const blocked = storyChecks("forbidden").find((run) => run.status === "completed")!;
    expect(blocked.output.title).toContain("push-refused");
    expect(`${blocked.output.summary}\n${blocked.output.text ?? ""}`).toContain(message);
    expect(pullOf("forbidden", s.number).draft).toBe(true);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("says a refused push's run had completed, keeps the work as a bundle and does not mark the pull ready", async () => {
    const s = await storyAtItsEnd("refused-completed", "memory");
    const work = await s.completeWithWork();
    const refusal = fx.injectFailure({ method: "POST", path: /^\/acme\/refused-completed\.git\/git-receive-pack$/, failure: { kind: "push-refused" } });
    const from = fx.fake.state.requests.length;
    const end = await deliverStoryWork(s.args({ status: "completed", commit: work }));
    refusal.close();
    expect(end).toEqual({ status: "blocked", failureClass: "push-refused" });
    const blocked = storyChecks("refused-completed").find((run) => run.status === "completed")!;
    const said = `${blocked.output.summary}\n${blocked.output.text ?? ""}`;
    expect(said).toContain("so the pull request does not hold this work (the run had completed).");
    expect(said).toContain(`The work is kept in the run directory as ${UNPUSHED_BUNDLE}.`);
    expect(existsSync(join(s.runDir, UNPUSHED_BUNDLE))).toBe(true);
    expect(readyRequests(from)).toEqual([]);
    expect(pullOf("refused-completed", s.number).draft).toBe(true);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("leaves the push waiting in the App's outbox as it stops, the end and the ready-for-review recorded behind it", async () => {
    const s = await storyAtItsEnd("stopping", "closed-durable");
    const work = await s.completeWithWork();
    const from = fx.fake.state.requests.length;
    const end = await deliverStoryWork(s.args({ status: "completed", commit: work }));
    expect(end).toEqual({ status: "completed", pushWaiting: true, handedOff: true });
    // Nothing went out; the push, the end on the new head and the ready-for-review wait on disk, in that order.
    expect(fx.fake.state.requests.slice(from)).toEqual([]);
    const waiting = s.outbox.list().filter((entry) => entry.state === "pending");
    const push = waiting.findIndex((entry) => entry.slot === "push");
    expect(waiting[push]?.write).toMatchObject({ kind: "push", sha: work, branch: s.pull.branch, runDir: s.runDir });
    expect(waiting.findIndex((entry) => entry.write.kind === "check" && entry.write.headSha === work && entry.write.status === "completed")).toBeGreaterThan(
      push,
    );
    expect(waiting.findIndex((entry) => entry.slot === "ready-for-review")).toBeGreaterThan(push);
    expect(await fx.fake.branchHead("acme", "stopping", s.pull.branch)).toBe(s.pull.headSha);
    expect(pullOf("stopping", s.number).draft).toBe(true);
  });

  it("says a refused push's blocked run had no class when it named none, and that its work is kept as a bundle", async () => {
    const s = await storyAtItsEnd("refused-unnamed", "durable");
    const work = await s.commitWork();
    await s.end({
      kind: "story.blocked",
      at: new Date().toISOString(),
      taskId: "story",
      failureClass: "suite-failed",
      detail: "red",
      branch: s.pull.branch,
      commit: work,
    });
    const refusal = fx.injectFailure({ method: "POST", path: /^\/acme\/refused-unnamed\.git\/git-receive-pack$/, failure: { kind: "push-refused" } });
    const end = await deliverStoryWork(s.args({ status: "blocked", commit: work }));
    refusal.close();
    expect(end).toEqual({ status: "blocked", failureClass: "push-refused" });
    await s.outbox.flush(s.story);
    const blocked = storyChecks("refused-unnamed").find((run) => run.status === "completed")!;
    const said = `${blocked.output.summary}\n${blocked.output.text ?? ""}`;
    expect(said).toContain("(the run had blocked (unknown))");
    expect(said).toContain(`The work is kept in the run directory as ${UNPUSHED_BUNDLE}.`);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("blocks the story when the outbox lets its refused push go because a later write of the story waited behind it", async () => {
    const s = await storyAtItsEnd("let-go", "durable");
    const work = await s.completeWithWork();
    const receivePack = /^\/acme\/let-go\.git\/git-receive-pack$/;
    const gate = fx.fake.holdRequests({ method: "POST", path: receivePack });
    const refusal = fx.injectFailure({ method: "POST", path: receivePack, failure: { kind: "push-refused" } });
    const delivering = deliverStoryWork(s.args({ status: "completed", commit: work }));
    await eventually("the push held at GitHub's door", () => (gate.waiting === 1 ? true : undefined));
    // A write of the story recorded while its push is being tried: the outbox withholds it and tells the story itself.
    await s.outbox.put(s.story, "comment:meanwhile", { kind: "comment", issueNumber: s.number, body: "written while the push was tried" });
    gate.open();
    const end = await delivering;
    refusal.close();
    // Once let go of, the push's slot is as empty as a delivered one's; the job must not take that for delivered.
    expect(end).toEqual({ status: "blocked", failureClass: "push-refused" });
    await s.outbox.flush(s.story);
    expect(storyChecks("let-go").filter((run) => run.headSha === work)).toEqual([]);
    const blocked = storyChecks("let-go").find((run) => run.status === "completed")!;
    expect(blocked.output.title).toContain("push-refused");
    expect(`${blocked.output.summary}\n${blocked.output.text ?? ""}`).toContain("GitHub refused the push.");
    expect(s.outbox.list().find((entry) => entry.slot === "comment:meanwhile")).toMatchObject({ state: "undeliverable" });
    expect(pullOf("let-go", s.number).draft).toBe(true);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("stops the story as git-failed saying the push did not go through when an outbox in memory could not try it", async () => {
    const s = await storyAtItsEnd("closed-memory", "closed-memory");
    const work = await s.completeWithWork();
    const from = fx.fake.state.requests.length;
    const stopped = deliverStoryWork(s.args({ status: "completed", commit: work }));
    await expect(stopped).rejects.toThrow(PushFailedError);
    await expect(stopped).rejects.toThrow(`Pushing ${work.slice(0, 12)} to ${s.pull.branch} failed 3 times: the push did not go through`);
    await expect(stopped).rejects.toMatchObject({ failureClass: "git-failed" });
    // Nothing reached GitHub, the push was let go of, and the end is still held (the runner reports the stop).
    expect(fx.fake.state.requests.slice(from)).toEqual([]);
    expect(s.outbox.list().filter((entry) => entry.slot === "push")).toEqual([]);
    expect(s.tracker.heldEnd?.kind).toBe("story.completed");
    expect(pullOf("closed-memory", s.number).draft).toBe(true);
    expect(lines.filter((line) => line.includes("closed-memory") && line.startsWith("error"))).toEqual([]);
  });
});
