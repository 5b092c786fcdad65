/**
 * End to end: the App is killed with SIGKILL in the middle of a story; after a restart on the
 * same data directory the story is resumed from a fresh worktree and completes (it is never
 * lost and never run by two processes at once).
 */
import { jest } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { startApp, type RunningApp } from "./app-process.js";
import { addStoryRepo, checksOn, harnessYml, labelNewIssue, OWNER, reportsDelivered, sandboxGrant, storyPull, storyRunsDir } from "./scenario.js";
import { processWithTag } from "../support/tmp.js";
import { eventually, until } from "../support/poll.js";

jest.setTimeout(180_000);

describe("the App killed with SIGKILL mid-story", () => {
  let root: string;
  const apps: RunningApp[] = [];

  // Declared before the fake's teardown (jest runs afterAll hooks in order): the App stops while the fake still answers.
  afterAll(async () => {
    // Releases any agent still waiting (none should be: the sandbox dies with the App).
    if (root) writeFileSync(join(root, "markers", "release"), "");
    for (const app of apps) await app.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const fake = useFakeGitHub();

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-e2e-restart-"));
  });

  it("resumes the story after a restart and completes it", async () => {
    const home = join(root, "home");
    const markers = join(root, "markers");
    mkdirSync(markers);
    await addStoryRepo(fake, "crash", harnessYml({ markers }));
    const first = await startApp({ fake, home, workDir: root, env: sandboxGrant(markers) });
    apps.push(first);
    const { number } = await labelNewIssue(fake, first, "crash", "Survive a crash");
    await eventually("the implementer to start", () => (existsSync(join(markers, "started")) ? true : undefined));
    // Reports go out beside the story: wait until one shows on GitHub, so the killed App leaves a check run to close.
    await eventually("a check run of the story in progress on GitHub", () =>
      fake.state.checkRuns.some((run) => run.repo === `${OWNER}/crash` && run.status !== "completed") ? true : undefined,
    );

    const killed = await first.kill9();
    expect(killed.signal).toBe("SIGKILL");
    // The sandbox dies with the App: the agent it was running is gone, not orphaned.
    await until("no process of the stopped App left", () => !processWithTag(markers), 10_000);
    const jobs = readdirSync(join(home, "queue", "jobs")).filter((name) => name.endsWith(".json"));
    expect(jobs).toHaveLength(1);

    const second = await startApp({ fake, home, workDir: root, env: sandboxGrant(markers) });
    apps.push(second);
    const story = await eventually("the resumed story to complete", async () => {
      const head = await fake.branchHead(OWNER, "crash", `harness/story-${number}`);
      const run = head ? checksOn(fake, "crash", head).get("harness / story") : undefined;
      return run?.status === "completed" && run.conclusion !== "cancelled" ? run : undefined;
    });
    expect(story.conclusion).toBe("success");
    await reportsDelivered(home);
    // The check runs the killed App left in progress were closed as interrupted, none stays in progress.
    const runs = fake.state.checkRuns.filter((run) => run.repo === `${OWNER}/crash`);
    expect(runs.filter((run) => run.status !== "completed")).toEqual([]);
    expect(runs.filter((run) => run.conclusion === "cancelled" && run.output.title === "Interrupted").length).toBeGreaterThan(0);
    expect(storyPull(fake, "crash", number)?.draft).toBe(false);
    // Two runs of the story: the interrupted one and the resumed one, in separate worktrees.
    expect(readdirSync(storyRunsDir(home, "crash", number))).toHaveLength(2);
    expect(fake.state.pulls.filter((pull) => pull.repo === `${OWNER}/crash`)).toHaveLength(1);
    fake.assertNoUnexpectedRequests();
  });
});
