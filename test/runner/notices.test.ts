/**
 * The runner's own notices go through the App's outbox: the announcement on the issue (👀 and
 * the link to the pull request) and the comment saying a story could not start. GitHub
 * refusing them (403 with retry-after, 502) delays them and loses nothing, across a restart of
 * the App's outbox (opened as the App opens it). Real runner, real pipeline, real git, the fake GitHub with failure injection.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { type Outbox } from "../../src/outbox/index.js";
import { outboxDir } from "../../src/github/story/index.js";
import type { JobLease } from "../../src/queue/index.js";
import { AGENT_SCRIPT, harnessYml } from "../e2e/scenario.js";
import { jest } from "@jest/globals";
import { recordingLog } from "./recording-log.js";
import { realRunner, storyLease } from "./real-runner.js";
import { outboxFixture } from "../support/outbox-fixture.js";
import { eventually } from "../support/poll.js";

jest.setTimeout(180_000);

describe("the runner's notices through the outbox", () => {
  const { log } = recordingLog();
  const fx = outboxFixture("harness-notices-", log);

  const worker = (home: string, outbox: Outbox) => realRunner(fx.fake, home, log, { outbox });

  const lease = (name: string, number: number, repository: { id: number; cloneUrl: string }): JobLease =>
    storyLease(fx.fake, { name, number, repository, title: "Notices" });

  const pending = (home: string): string[] => readdirSync(outboxDir(home)).filter((name) => name.endsWith(".json"));
  const commentsOn = (name: string, number: number): string[] => fx.fake.state.commentsOn("acme", name, number).map((comment) => comment.body);

  it("announces the story once a secondary rate limit (403 retry-after) on the issue has passed", async () => {
    const repo = await fx.fake.addRepository({
      owner: "acme",
      name: "announce",
      files: { "README.md": "# announce\n", ".github/harness.yml": harnessYml(), ".harness-test/agent.sh": AGENT_SCRIPT },
    });
    const issue = fx.fake.createIssue("acme", "announce", { title: "Notices", body: "", user: "acme" });
    const home = join(fx.root, "home-announce");
    const outbox = await fx.openOutbox(home);
    const window = fx.fake.injectFailure({
      method: "POST",
      path: new RegExp(`/repos/acme/announce/issues/${issue.number}/(comments|reactions)$`),
      failure: { kind: "secondary-rate-limit", retryAfterSeconds: 1 },
    });
    try {
      await worker(home, outbox)(lease("announce", issue.number, repo), new AbortController().signal);
      expect(window.served).toBeGreaterThan(0);
      expect(commentsOn("announce", issue.number)).toEqual([]);
      expect(pending(home).length).toBeGreaterThan(0);
    } finally {
      window.close();
    }
    const pull = fx.fake.state.pulls.find((candidate) => candidate.repo === "acme/announce" && candidate.headRef === `harness/story-${issue.number}`)!;
    await eventually("the announcement", () => (commentsOn("announce", issue.number).length > 0 ? true : undefined));
    await eventually("the outbox to empty", () => (pending(home).length === 0 ? true : undefined));
    expect(commentsOn("announce", issue.number)).toEqual([`Started this story in #${pull.number} (${fx.fake.url}/acme/announce/pull/${pull.number}).`]);
    expect(
      fx.fake.state.reactions
        .filter((reaction) => reaction.repo === "acme/announce" && reaction.issueNumber === issue.number)
        .map((reaction) => reaction.content),
    ).toEqual(["eyes"]);
    // Everything behind it arrived too: the story's end, and the pull request is ready.
    const story = fx.fake.state.checkRuns.filter((run) => run.repo === "acme/announce" && run.name === "harness / story").at(-1);
    expect(story).toMatchObject({ status: "completed", conclusion: "success" });
    await eventually("ready for review", () => (pull.draft === false ? true : undefined));
    // The job ended before GitHub took its writes: delivered later, they leave the App's memory too.
    await eventually("the outbox to let go of the story", () => (outbox.held() === 0 ? true : undefined));
    fx.fake.assertNoUnexpectedRequests();
  });

  it("tells the issue a story could not start once a 502 has passed, after a restart", async () => {
    const repo = await fx.fake.addRepository({ owner: "acme", name: "unstartable", files: { "README.md": "x\n" } });
    const issue = fx.fake.createIssue("acme", "unstartable", { title: "Nowhere", body: "", user: "acme" });
    const home = join(fx.root, "home-unstartable");
    const first = await fx.openOutbox(home);
    const window = fx.fake.injectFailure({
      method: "POST",
      path: new RegExp(`/repos/acme/unstartable/issues/${issue.number}/comments$`),
      failure: { kind: "bad-gateway" },
    });
    try {
      // The repository cannot be fetched: the story cannot start, and the issue must hear it.
      await worker(home, first)(lease("unstartable", issue.number, { id: repo.id, cloneUrl: `${fx.fake.url}/acme/missing.git` }), new AbortController().signal);
      expect(window.served).toBeGreaterThan(0);
      expect(commentsOn("unstartable", issue.number)).toEqual([]);
      expect(pending(home)).toHaveLength(1);
      // The App stops with the comment undelivered; a new one finds it on disk.
      await first.close();
    } finally {
      window.close();
    }
    await fx.openOutbox(home);
    const told = await eventually("the comment", () => commentsOn("unstartable", issue.number)[0]);
    expect(told).toContain("could not start (git-failed)");
    await eventually("the outbox to empty", () => (pending(home).length === 0 ? true : undefined));
    expect(commentsOn("unstartable", issue.number)).toHaveLength(1);
    fx.fake.assertNoUnexpectedRequests();
  });
});
