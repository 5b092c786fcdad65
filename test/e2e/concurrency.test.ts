/** End to end: with HARNESS_CONCURRENCY=2, two stories of one repository run at the same time and both complete. */
import { jest } from "@jest/globals";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { startApp, type RunningApp } from "./app-process.js";
import { addStoryRepo, checksOn, harnessYml, labelNewIssue, OWNER, reportsDelivered, sandboxGrant, storyPull } from "./scenario.js";
import { eventually } from "../support/poll.js";

jest.setTimeout(180_000);

describe("two stories at once", () => {
  let app: RunningApp | undefined;
  let root: string;

  // Declared before the fake's teardown (jest runs afterAll hooks in order): the App stops while the fake still answers.
  afterAll(async () => {
    if (root && existsSync(join(root, "markers"))) writeFileSync(join(root, "markers", "release"), "");
    await app?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const fake = useFakeGitHub();

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-e2e-concurrency-"));
  });

  it("runs two stories of one repository together when HARNESS_CONCURRENCY=2", async () => {
    const home = join(root, "home");
    const markers = join(root, "markers");
    mkdirSync(markers);
    await addStoryRepo(fake, "pair", harnessYml({ markers }));
    app = await startApp({ fake, home, workDir: root, env: { HARNESS_CONCURRENCY: "2", ...sandboxGrant(markers) } });
    const first = await labelNewIssue(fake, app, "pair", "First");
    // The first story's implementer waits on the marker, so the second must start beside it.
    await eventually("the first implementer to start", () => (existsSync(join(markers, "started")) ? true : undefined));
    const second = await labelNewIssue(fake, app, "pair", "Second");
    const running = app;
    await eventually(
      "the second story to complete while the first waits",
      async () => {
        const head = await fake.branchHead(OWNER, "pair", `harness/story-${second.number}`);
        return head && checksOn(fake, "pair", head).get("harness / story")?.conclusion === "success" ? true : undefined;
      },
      180_000,
    );
    writeFileSync(join(markers, "release"), "");
    await eventually(
      "the first story to complete",
      async () => {
        const head = await fake.branchHead(OWNER, "pair", `harness/story-${first.number}`);
        return head && checksOn(fake, "pair", head).get("harness / story")?.conclusion === "success" ? true : undefined;
      },
      180_000,
    );
    await reportsDelivered(home);
    expect(storyPull(fake, "pair", first.number)?.draft).toBe(false);
    expect(storyPull(fake, "pair", second.number)?.draft).toBe(false);
    // Read once the App has stopped: its last log lines are written at exit.
    await running.stop();
    expect((await running.log()).includes('"level":50')).toBe(false);
    fake.assertNoUnexpectedRequests();
  });
});
