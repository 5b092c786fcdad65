import { ProbotOctokit } from "probot";
import { authenticateInstallation, TrackingReporter, type AppOctokit } from "../../src/runner/index.js";
import { emptySnapshot, type HistoryEvent, type StorySnapshot } from "../../src/pipeline/index.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github/index.js";

describe("installation authentication", () => {
  let fake: FakeGitHub;
  beforeAll(async () => {
    fake = await startFakeGitHub();
    await fake.addRepository({ owner: "acme", name: "tokens", files: { "README.md": "x\n" } });
  });
  afterAll(async () => {
    await fake.close();
  });

  it("creates the token through the App octokit's base URL and replaces it when it nears expiry", async () => {
    const appOctokit = new ProbotOctokit({ auth: { appId: fake.appId, privateKey: fake.privateKey }, baseUrl: fake.apiUrl }) as AppOctokit;
    let clock = Date.now();
    const installation = await authenticateInstallation(appOctokit, fake.installationId, { now: () => clock, throttle: false });
    const first = await installation.token();
    expect(fake.issuedTokens().map((issued) => issued.token)).toContain(first);
    const repo = await installation.octokit.rest.repos.get({ owner: "acme", repo: "tokens" });
    expect(repo.data.full_name).toBe("acme/tokens");
    expect(await installation.token()).toBe(first);

    clock += 2 * 60 * 60_000; // two hours later: the token has expired
    const second = await installation.token();
    expect(second).not.toBe(first);
    expect(installation.tokensSeen()).toEqual([first, second]);
    const lastAuth = fake.state.requests.filter((request) => request.path === "/api/v3/repos/acme/tokens").length;
    await installation.octokit.rest.repos.get({ owner: "acme", repo: "tokens" });
    expect(fake.state.requests.filter((request) => request.path === "/api/v3/repos/acme/tokens")).toHaveLength(lastAuth + 1);
    fake.assertNoUnexpectedRequests();
  });
});

describe("TrackingReporter", () => {
  it("forwards events, remembers the end, survives a failing reporter, and blocks a story that never started", async () => {
    const seen: string[] = [];
    const failures: unknown[] = [];
    const tracker = new TrackingReporter(
      {
        onEvent: async (event: HistoryEvent, _snapshot: StorySnapshot) => {
          seen.push(event.kind);
          if (event.kind === "run.started") throw new Error("GitHub is down");
        },
      },
      (error) => failures.push(error),
    );
    const start: Extract<HistoryEvent, { kind: "run.started" }> = {
      kind: "run.started", at: new Date().toISOString(), storyId: "7", runId: "r1", taskId: "story", title: "T", stages: ["implementer", "verifier"], maxAttempts: 3, readmission: false,
    };
    expect(tracker.ended).toBe(false);
    await tracker.block({ failureClass: "config-invalid", detail: ".github/harness.yml: $.max_attempts must be integer", start });
    expect(seen).toEqual(["run.started", "story.blocked"]);
    expect(failures).toHaveLength(1);
    expect(tracker.ended).toBe(true);
    expect(tracker.snapshot).toMatchObject({ outcome: "blocked", failureClass: "config-invalid", storyId: "7" });
    expect(tracker.snapshot.stages.map((stage) => stage.id)).toEqual(["implementer", "verifier"]);
    expect(emptySnapshot().outcome).toBe("running");
  });
});
