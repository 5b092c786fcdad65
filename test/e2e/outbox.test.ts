/**
 * End to end: GitHub has a bad day while stories report. The fake answers 403 with
 * `retry-after` (a secondary rate limit) on check runs and comments and 502 on GraphQL, the App
 * is restarted in the middle, and once the window closes every final report arrives. A push
 * that does not get through (502) waits in the outbox across a restart, and the story's end
 * follows it; a push GitHub refuses blocks the story as `push-refused` instead of reporting it
 * complete.
 */
import { jest } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FailureWindow } from "../support/fake-github/index.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { startApp, type RunningApp } from "./app-process.js";
import {
  addStoryRepo,
  CHECK_NAMES,
  sandboxGrant,
  checksOn,
  harnessYml,
  labelNewIssue,
  logged,
  OWNER,
  queueDrained,
  reportsDelivered,
  STATUS_MARKER,
  storyEnd,
  storyPull,
  storyRunsDir,
} from "./scenario.js";
import { eventually } from "../support/poll.js";

jest.setTimeout(240_000);

function pendingOutbox(home: string): string[] {
  const dir = join(home, "outbox");
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".json")) : [];
}

describe("the outbox, end to end", () => {
  let root: string;
  const apps: RunningApp[] = [];
  const windows: FailureWindow[] = [];

  // Declared before the fake's teardown (jest runs afterAll hooks in order): the App stops while the fake still answers.
  afterAll(async () => {
    for (const window of windows) window.close();
    for (const app of apps) await app.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const fake = useFakeGitHub();

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-e2e-outbox-"));
  });

  it("delivers every final report once a window of 403 retry-after and GraphQL 502 has passed, across a restart", async () => {
    const home = join(root, "home-flaky");
    const markers = join(root, "markers-flaky");
    mkdirSync(markers);
    await addStoryRepo(fake, "flaky", harnessYml({ markers }));
    const env = { HARNESS_OUTBOX_MAX_DELAY_MS: "1000", ...sandboxGrant(markers) };
    const first = await startApp({ fake, home, workDir: root, env });
    apps.push(first);
    const { number } = await labelNewIssue(fake, first, "flaky", "Report through a bad day");
    await eventually("the implementer to start", () => (existsSync(join(markers, "started")) ? true : undefined));
    const pull = await eventually("the draft pull request", () => storyPull(fake, "flaky", number));

    const startHead = await fake.branchHead(OWNER, "flaky", `harness/story-${number}`);
    const repoApi = `^/api/v3/repos/${OWNER}/flaky/`;
    const rateLimited = fake.injectFailure({
      path: new RegExp(`${repoApi}(check-runs|issues/)`),
      failure: { kind: "secondary-rate-limit", retryAfterSeconds: 1 },
    });
    const badGateway = fake.injectFailure({ path: /^\/api\/graphql$/, failure: { kind: "bad-gateway" } });
    windows.push(rateLimited, badGateway);
    writeFileSync(join(markers, "release"), "");

    // The story finishes and pushes; its reports wait in the outbox while GitHub refuses them.
    await queueDrained(home);
    await eventually("the refusals", () => (rateLimited.served >= 2 ? true : undefined));
    const head = await fake.branchHead(OWNER, "flaky", `harness/story-${number}`);
    expect(head).not.toBe(startHead);
    expect(checksOn(fake, "flaky", head ?? "").get("harness / story")?.status).not.toBe("completed");
    expect(pendingOutbox(home).length).toBeGreaterThan(0);
    expect(storyPull(fake, "flaky", number)?.draft).toBe(true);

    // Restart in the middle of the bad day; the window closes once the new App met it too.
    await first.stop();
    const servedBefore = rateLimited.served;
    const second = await startApp({ fake, home, workDir: root, env });
    apps.push(second);
    await eventually("the restarted App to meet the rate limit", () => (rateLimited.served > servedBefore ? true : undefined));
    rateLimited.close();
    await eventually("the ready-for-review mutation to meet the 502", () => (badGateway.served > 0 ? true : undefined));
    badGateway.close();

    const { story } = await storyEnd(fake, "flaky", number, 120_000);
    expect(story.conclusion).toBe("success");
    const onHead = checksOn(fake, "flaky", head ?? "");
    for (const name of CHECK_NAMES) expect([name, onHead.get(name)?.status]).toEqual([name, "completed"]);
    await eventually("the pull request to be ready for review", () => (storyPull(fake, "flaky", number)?.draft === false ? true : undefined));
    const status = await eventually("the final status comment", () =>
      fake.state.commentsOn(OWNER, "flaky", pull.number).find((comment) => comment.body.startsWith(STATUS_MARKER) && comment.body.includes("✅ Completed")),
    );
    expect(fake.state.commentsOn(OWNER, "flaky", pull.number).filter((comment) => comment.body.startsWith(STATUS_MARKER))).toEqual([status]);
    await eventually("the outbox to empty", () => (pendingOutbox(home).length === 0 ? true : undefined));
    expect(fake.state.checkRuns.filter((run) => run.repo === `${OWNER}/flaky` && run.status !== "completed")).toEqual([]);
    await logged(second, "outbox: GitHub refused a write; it is retried");
    fake.assertNoUnexpectedRequests();
  });

  it("keeps a push GitHub cannot take in the outbox, pushes it after a restart, and only then reports the story's end", async () => {
    const home = join(root, "home-push-later");
    const markers = join(root, "markers-push-later");
    mkdirSync(markers);
    await addStoryRepo(fake, "push-later", harnessYml({ markers }));
    const env = { HARNESS_OUTBOX_MAX_DELAY_MS: "500", ...sandboxGrant(markers) };
    const first = await startApp({ fake, home, workDir: root, env });
    apps.push(first);
    const { number } = await labelNewIssue(fake, first, "push-later", "Push after a restart");
    await eventually("the implementer to start", () => (existsSync(join(markers, "started")) ? true : undefined));
    const pull = await eventually("the draft pull request", () => storyPull(fake, "push-later", number));
    const startHead = await fake.branchHead(OWNER, "push-later", `harness/story-${number}`);
    const badGateway = fake.injectFailure({
      method: "POST",
      path: new RegExp(`^/${OWNER}/push-later\\.git/git-receive-pack$`),
      failure: { kind: "bad-gateway" },
    });
    windows.push(badGateway);
    writeFileSync(join(markers, "release"), "");

    // The job ends with its push recorded and waiting; nothing claims the work arrived.
    await queueDrained(home);
    await logged(first, "the push waits in the outbox");
    expect(await fake.branchHead(OWNER, "push-later", `harness/story-${number}`)).toBe(startHead);
    expect(fake.state.checkRuns.filter((run) => run.repo === `${OWNER}/push-later` && run.name === "harness / story" && run.conclusion === "success")).toEqual(
      [],
    );
    expect(pendingOutbox(home).length).toBeGreaterThan(0);

    await first.stop();
    badGateway.close();
    const second = await startApp({ fake, home, workDir: root, env });
    apps.push(second);
    const { head, story } = await storyEnd(fake, "push-later", number, 120_000);
    expect(head).not.toBe(startHead);
    expect(story.conclusion).toBe("success");
    await eventually("the pull request to be ready for review", () => (storyPull(fake, "push-later", number)?.draft === false ? true : undefined));
    const status = await eventually("the final status comment", () =>
      fake.state
        .commentsOn(OWNER, "push-later", pull.number)
        .find((comment) => comment.body.startsWith(STATUS_MARKER) && comment.body.includes("✅ Completed")),
    );
    expect(status).toBeDefined();
    await eventually("the outbox to empty", () => (pendingOutbox(home).length === 0 ? true : undefined));
    expect(fake.state.checkRuns.filter((run) => run.repo === `${OWNER}/push-later` && run.status !== "completed")).toEqual([]);
    fake.assertNoUnexpectedRequests();
  });

  it("blocks a story whose push GitHub refuses as push-refused, with GitHub's words, and keeps the work in the run directory", async () => {
    const home = join(root, "home-refused");
    const markers = join(root, "markers-refused");
    mkdirSync(markers);
    await addStoryRepo(fake, "refused", harnessYml({ markers }));
    const app = await startApp({ fake, home, workDir: root, env: sandboxGrant(markers) });
    apps.push(app);
    const { number } = await labelNewIssue(fake, app, "refused", "Ship a huge file");
    await eventually("the implementer to start", () => (existsSync(join(markers, "started")) ? true : undefined));
    const pull = await eventually("the draft pull request", () => storyPull(fake, "refused", number));
    const startHead = await fake.branchHead(OWNER, "refused", `harness/story-${number}`);
    const refusal = fake.injectFailure({ path: new RegExp(`^/${OWNER}/refused\\.git/git-receive-pack$`), failure: { kind: "push-refused" } });
    windows.push(refusal);
    writeFileSync(join(markers, "release"), "");

    const { head, story } = await storyEnd(fake, "refused", number);
    expect(refusal.served).toBeGreaterThan(0);
    refusal.close();
    expect(head).toBe(startHead);
    expect(story.conclusion).not.toBe("success");
    expect(story.output.title).toContain("push-refused");
    expect(`${story.output.summary}\n${story.output.text ?? ""}`).toContain("GH001: Large files detected");
    await reportsDelivered(home);
    const comment = fake.state.commentsOn(OWNER, "refused", pull.number).find((entry) => entry.body.startsWith(STATUS_MARKER));
    expect(comment?.body).toContain("⛔ Blocked");
    expect(comment?.body).not.toContain("✅ Completed");
    expect(storyPull(fake, "refused", number)?.draft).toBe(true);
    const storyDir = storyRunsDir(home, "refused", number);
    expect(readdirSync(storyDir).some((run) => existsSync(join(storyDir, run, "unpushed-work.bundle")))).toBe(true);
    await logged(app, "push-refused");
    fake.assertNoUnexpectedRequests();
  });
});
