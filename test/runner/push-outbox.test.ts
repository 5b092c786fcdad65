/**
 * The final push is an outbox write: recorded before it is tried, tried a few times by the job,
 * then carried by the App's outbox across a restart, and the story's end is reported only after
 * the work is pushed. A push GitHub refuses only later turns the waiting reports into a
 * truthful `push-refused`. Real runner, real pipeline, real git, the fake GitHub answering 502
 * on git's smart HTTP (a push that does not get through) or refusing it.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Outbox } from "../../src/outbox/index.js";
import { outboxDir } from "../../src/github/story/index.js";
import type { JobLease } from "../../src/queue/index.js";
import { UNPUSHED_BUNDLE } from "../../src/runner/index.js";
import { git, HARNESS_IDENTITY, storyDirName } from "../../src/workspace/index.js";
import { fakeOctokit } from "../support/fake-github/client.js";
import { AGENT_SCRIPT, harnessYml } from "../e2e/scenario.js";
import { jest } from "@jest/globals";
import { recordingLog } from "./recording-log.js";
import { realRunner, storyLease } from "./real-runner.js";
import { outboxFixture } from "../support/outbox-fixture.js";
import { eventually } from "../support/poll.js";

jest.setTimeout(240_000);

describe("the final push through the outbox", () => {
  const { lines, log } = recordingLog();
  const fx = outboxFixture("harness-push-outbox-", log);

  const worker = (home: string, outbox: Outbox) => realRunner(fx.fake, home, log, { outbox });

  const lease = (name: string, number: number, repository: { id: number; cloneUrl: string }): JobLease =>
    storyLease(fx.fake, { name, number, repository, title: "Push it" });

  const pushEntries = (home: string): string[] =>
    readdirSync(outboxDir(home)).filter(
      (name) => name.endsWith(".json") && (JSON.parse(readFileSync(join(outboxDir(home), name), "utf8")) as { write: { kind: string } }).write.kind === "push",
    );
  const storyChecks = (name: string) => fx.fake.state.checkRuns.filter((run) => run.repo === `acme/${name}` && run.name === "harness / story");
  const pullOf = (name: string, number: number) =>
    fx.fake.state.pulls.find((pull) => pull.repo === `acme/${name}` && pull.headRef === `harness/story-${number}`)!;

  /** A story whose branch and draft pull request exist already (as after its first start), so the only push is the final one. */
  async function startedStory(name: string) {
    const repo = await fx.fake.addRepository({
      owner: "acme",
      name,
      files: { "README.md": `# ${name}\n`, ".github/harness.yml": harnessYml(), ".harness-test/agent.sh": AGENT_SCRIPT },
    });
    const issue = fx.fake.createIssue("acme", name, { title: "Push it", body: "", user: "acme" });
    const home = join(fx.root, `home-${name}`);
    const main = (await fx.fake.branchHead("acme", name, "main"))!;
    const start = await git(["commit-tree", `${main}^{tree}`, "-p", main, "-m", "Story started"], { cwd: repo.bareDir, env: HARNESS_IDENTITY });
    await git(["update-ref", `refs/heads/harness/story-${issue.number}`, start], { cwd: repo.bareDir });
    await fakeOctokit(fx.fake, { installation: true }).rest.pulls.create({
      owner: "acme",
      repo: name,
      head: `harness/story-${issue.number}`,
      base: "main",
      title: `Story #${issue.number}: Push it`,
      draft: true,
    });
    return { repo, issue, home, start };
  }

  /** Runs a story to its end while every push gets a 502; returns what a test needs to go on. */
  async function storyWithPushWaiting(name: string) {
    const { repo, issue, home, start } = await startedStory(name);
    const first = await fx.openOutbox(home);
    const badGateway = fx.injectFailure({ method: "POST", path: new RegExp(`^/acme/${name}\\.git/git-receive-pack$`), failure: { kind: "bad-gateway" } });
    await worker(home, first)(lease(name, issue.number, repo), new AbortController().signal);
    const startHead = await fx.fake.branchHead("acme", name, `harness/story-${issue.number}`);
    expect(startHead).toBe(start);

    // The job tried, GitHub could not take it: the push waits on disk, the end is not reported.
    expect(badGateway.served).toBeGreaterThanOrEqual(3);
    expect(pushEntries(home)).toHaveLength(1);
    expect(lines.some((line) => line.includes("the push waits in the outbox") && line.includes(`acme/${name}#${issue.number}`))).toBe(true);
    expect(storyChecks(name).filter((run) => run.status === "completed")).toEqual([]);
    expect(pullOf(name, issue.number).draft).toBe(true);
    // The story's check run on the head the pull request still shows says why it stays in progress, with GitHub's words.
    const tip = (JSON.parse(readFileSync(join(outboxDir(home), pushEntries(home)[0]!), "utf8")) as { write: { sha: string } }).write.sha;
    const shown = storyChecks(name).filter((run) => run.headSha === start);
    expect(shown).toEqual([expect.objectContaining({ status: "in_progress", output: expect.objectContaining({ title: "Push waiting" }) })]);
    const said = `${shown[0]!.output.summary}`;
    expect(said).toMatch(
      new RegExp(
        `^⏳ \\*\\*Push waiting:\\*\\* the branch's new commit \`${tip.slice(0, 12)}\` could not be pushed to \`harness/story-${issue.number}\` yet; ` +
          "the story's end is reported once it goes through\\. The App keeps retrying; its last try got:\\n\\n```text\\n[^`]*HTTP 502[^`]*\\n```\\n\\n---\\n\\n⏳ Attempt 1",
      ),
    );
    // Said on GitHub while the push still waits: no push went through yet.
    expect(fx.fake.state.requests.some((request) => request.path === `/acme/${name}.git/git-receive-pack` && request.status === 200)).toBe(false);
    return { home, number: issue.number, first, badGateway, startHead, repo, tip, waitingCheckId: shown[0]!.id };
  }

  it("pushes the work after a restart, and only then reports the story's end", async () => {
    const { home, number, first, badGateway, startHead, repo, tip, waitingCheckId } = await storyWithPushWaiting("pushy");
    // The story labelled again meanwhile: no new run starts beside the work still waiting to be pushed.
    const runsBefore = readdirSync(join(home, "runs", storyDirName(`acme/pushy#${number}`))).length;
    await worker(home, first)(lease("pushy", number, repo), new AbortController().signal);
    expect(lines.some((line) => line.startsWith("error story stopped") && line.includes("still waiting to be pushed"))).toBe(true);
    expect(readdirSync(join(home, "runs", storyDirName(`acme/pushy#${number}`)))).toHaveLength(runsBefore);
    // The App stops with the push undelivered; GitHub recovers; a new App starts on the same data directory.
    await first.close();
    badGateway.close();
    const second = await fx.openOutbox(home);

    const head = await eventually("the push", async () => {
      const current = await fx.fake.branchHead("acme", "pushy", `harness/story-${number}`);
      return current && current !== startHead ? current : undefined;
    });
    const story = await eventually("the story's end on the pushed head", () =>
      storyChecks("pushy").find((run) => run.headSha === head && run.status === "completed"),
    );
    expect(story.conclusion).toBe("success");
    expect(head).toBe(tip);
    // The waiting line is gone: the check run that showed it is closed as moved, the one on the pushed head reports the end.
    const left = await eventually("the waiting check run to be closed", () =>
      storyChecks("pushy").find((run) => run.id === waitingCheckId && run.status === "completed"),
    );
    expect(left).toMatchObject({ conclusion: "neutral", output: { title: "Moved to the pushed commit" } });
    for (const run of storyChecks("pushy")) expect(`${run.output.title}\n${run.output.summary}`).not.toContain("Push waiting");
    await eventually("ready for review", () => (pullOf("pushy", number).draft === false ? true : undefined));
    await eventually("the outbox to empty", () => (readdirSync(outboxDir(home)).filter((file) => file.endsWith(".json")).length === 0 ? true : undefined));
    // What the dead process's reporter left is let go once delivered: memory does not grow with stories.
    await eventually("the outbox to let go of what it delivered", () => (second.held() === 0 ? true : undefined));

    // Nothing reported the end before the work arrived.
    const requests = fx.fake.state.requests;
    const pushed = requests.findIndex((request) => request.method === "POST" && request.path === "/acme/pushy.git/git-receive-pack" && request.status === 200);
    const firstOnHead = requests.findIndex(
      (request) => request.method === "POST" && request.path.endsWith("/check-runs") && (request.body as { head_sha?: string } | undefined)?.head_sha === head,
    );
    const completedComment = requests.findIndex(
      (request) => request.path.includes("/repos/acme/pushy/issues/") && JSON.stringify(request.body ?? "").includes("Completed"),
    );
    expect(pushed).toBeGreaterThan(-1);
    expect(firstOnHead).toBeGreaterThan(pushed);
    expect(completedComment).toBeGreaterThan(pushed);
    expect(fx.fake.state.checkRuns.filter((run) => run.repo === "acme/pushy" && run.status !== "completed")).toEqual([]);
    // The second label's answer came after the push too.
    const told = await eventually("the answer to the second label", () =>
      fx.fake.state.commentsOn("acme", "pushy", number).find((comment) => comment.body.includes("still waiting to be pushed")),
    );
    expect(requests.indexOf(requests.find((request) => JSON.stringify(request.body ?? "").includes("still waiting to be pushed"))!)).toBeGreaterThan(pushed);
    expect(told.body).toContain("git-failed");
    fx.fake.assertNoUnexpectedRequests();
  });

  it("turns the waiting reports into push-refused when GitHub refuses the push after the job ended", async () => {
    const { home, number, first, badGateway, startHead } = await storyWithPushWaiting("refused-later");
    const refusal = fx.injectFailure({ method: "POST", path: /^\/acme\/refused-later\.git\/git-receive-pack$/, failure: { kind: "push-refused" } });
    badGateway.close();

    const blocked = await eventually("the story check to say push-refused", () =>
      storyChecks("refused-later").find((run) => run.status === "completed" && run.output.title === "Blocked: push-refused"),
    );
    refusal.close();
    expect(blocked.conclusion).toBe("failure");
    expect(`${blocked.output.summary}`).toContain("GH001: Large files detected");
    expect(storyChecks("refused-later").filter((run) => run.conclusion === "success")).toEqual([]);
    expect(await fx.fake.branchHead("acme", "refused-later", `harness/story-${number}`)).toBe(startHead);
    const told = await eventually("the issue to be told", () =>
      fx.fake.state.commentsOn("acme", "refused-later", number).find((comment) => comment.body.includes("push-refused")),
    );
    expect(told.body).toContain("could not be delivered");
    await eventually("harness:blocked", () =>
      fx.fake.state.issue(fx.fake.state.repo("acme", "refused-later")!, number)?.labels.includes("harness:blocked") ? true : undefined,
    );
    expect(pullOf("refused-later", number).draft).toBe(true);
    const runsDir = join(home, "runs", storyDirName(`acme/refused-later#${number}`));
    expect(readdirSync(runsDir).some((run) => existsSync(join(runsDir, run, UNPUSHED_BUNDLE)))).toBe(true);
    expect(first.list().some((entry) => entry.state === "undeliverable" && (entry.lastError ?? "").startsWith("withheld"))).toBe(true);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("blocks the story as push-refused, saying what the run had been, when GitHub refuses the push during the job", async () => {
    const { repo, issue, home, start } = await startedStory("refused-now");
    const outbox = await fx.openOutbox(home);
    const refusal = fx.injectFailure({ method: "POST", path: /^\/acme\/refused-now\.git\/git-receive-pack$/, failure: { kind: "push-refused" } });
    await worker(home, outbox)(lease("refused-now", issue.number, repo), new AbortController().signal);
    expect(refusal.served).toBeGreaterThan(0);
    refusal.close();
    // Refused, not waiting: nothing of the push stays in the outbox, the branch keeps its start, the work is kept as a bundle.
    expect(pushEntries(home)).toEqual([]);
    expect(await fx.fake.branchHead("acme", "refused-now", `harness/story-${issue.number}`)).toBe(start);
    const runsDir = join(home, "runs", storyDirName(`acme/refused-now#${issue.number}`));
    expect(readdirSync(runsDir).some((run) => existsSync(join(runsDir, run, UNPUSHED_BUNDLE)))).toBe(true);
    expect(lines.some((line) => line.includes("the push waits in the outbox") && line.includes("acme/refused-now"))).toBe(false);
    const blocked = await eventually("the story check to say push-refused", () =>
      storyChecks("refused-now").find((run) => run.status === "completed" && run.headSha === start),
    );
    expect(blocked.conclusion).not.toBe("success");
    expect(blocked.output.title).toContain("push-refused");
    const said = `${blocked.output.summary}\n${blocked.output.text ?? ""}`;
    expect(said).toContain("GH001: Large files detected");
    expect(said).toMatch(new RegExp(`GitHub refused the push of [0-9a-f]{12} to harness/story-${issue.number}, so the pull request does not hold this work`));
    expect(said).toContain("(the run had completed)");
    expect(said).toContain(`The work is kept in the run directory as ${UNPUSHED_BUNDLE}.`);
    expect(lines.filter((line) => line.startsWith("info story finished") && line.includes(`acme/refused-now#${issue.number}`))).toEqual([
      expect.stringContaining('"status":"blocked","failureClass":"push-refused"'),
    ]);
    await eventually("harness:blocked", () =>
      fx.fake.state.issue(fx.fake.state.repo("acme", "refused-now")!, issue.number)?.labels.includes("harness:blocked") ? true : undefined,
    );
    await eventually("the outbox to empty", () => (readdirSync(outboxDir(home)).filter((file) => file.endsWith(".json")).length === 0 ? true : undefined));
    expect(pullOf("refused-now", issue.number).draft).toBe(true);
    expect(storyChecks("refused-now").filter((run) => run.conclusion === "success")).toEqual([]);
    fx.fake.assertNoUnexpectedRequests();
  });

  it("with an outbox in memory, stops the story as git-failed when the job's own tries of the push fail (nothing would try again)", async () => {
    const { repo, issue, home, start } = await startedStory("memory-push");
    const badGateway = fx.injectFailure({ method: "POST", path: /^\/acme\/memory-push\.git\/git-receive-pack$/, failure: { kind: "bad-gateway" } });
    await realRunner(fx.fake, home, log)(lease("memory-push", issue.number, repo), new AbortController().signal);
    badGateway.close();
    // Tried three times by the job, then given up on: the story stops saying so, and claims nothing.
    expect(badGateway.served).toBe(3);
    const stopped = lines.filter((line) => line.startsWith("error story stopped") && line.includes(`acme/memory-push#${issue.number}`));
    expect(stopped).toEqual([expect.stringContaining('"failureClass":"git-failed"')]);
    expect(stopped[0]).toMatch(new RegExp(`Pushing [0-9a-f]{12} to harness/story-${issue.number} failed 3 times: [^"]*HTTP 502`));
    expect(lines.some((line) => line.startsWith("info story finished") && line.includes("acme/memory-push"))).toBe(false);
    expect(await fx.fake.branchHead("acme", "memory-push", `harness/story-${issue.number}`)).toBe(start);
    expect(storyChecks("memory-push").filter((run) => run.conclusion === "success")).toEqual([]);
    expect(pullOf("memory-push", issue.number).draft).toBe(true);
  });
});
