import { TrackingReporter } from "../../src/runner/index.js";
import { emptySnapshot, type HistoryEvent, type StorySnapshot } from "../../src/pipeline/index.js";

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
        setHeadSha: async (sha: string) => void seen.push(`head ${sha}`),
        showPushWaiting: async () => void seen.push("push waiting"),
        markReadyForReview: async () => void seen.push("ready"),
        handOff: async () => false,
      },
      (error) => failures.push(error),
    );
    const start: Extract<HistoryEvent, { kind: "run.started" }> = {
      kind: "run.started",
      at: new Date().toISOString(),
      storyId: "7",
      runId: "r1",
      taskId: "story",
      title: "T",
      stages: ["implementer", "verifier"],
      maxAttempts: 3,
      readmission: false,
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
