/**
 * A story without a plan is a plan of one task (src/pipeline/one-task.ts): its journal carries
 * `task.planned`, `task.started` and `task.finished` like a planned story's, its commit lands
 * on the story branch directly (no merge commit), and what GitHub shows of it is what it showed
 * before those events existed: the same check runs under the same names, the same status
 * comment, no table of waves.
 */
import { emptySnapshot, reduceSnapshot, type HistoryEvent, type StorySnapshot } from "../../src/pipeline/index.js";
import { CHECK_NAMES, planChecks, renderStatusComment } from "../../src/github/report/index.js";
import { git } from "../../src/workspace/index.js";
import { removeTempDirs } from "../support/tmp.js";
import { kinds, makeScenario, ofKind, runScenario, scriptedConfig } from "./helpers.js";

afterAll(removeTempDirs);

const TASK_EVENTS = new Set(["task.planned", "task.started", "task.finished"]);

/** What GitHub is sent for a snapshot: the check runs and the status comment. */
const shown = (snapshot: StorySnapshot): string => JSON.stringify({ checks: planChecks(snapshot), comment: renderStatusComment(snapshot) });

/** What GitHub is shown after each event, a state repeated by the next event counted once. */
function views(journal: readonly HistoryEvent[]): string[] {
  const out: string[] = [];
  let snapshot = emptySnapshot();
  for (const event of journal) {
    snapshot = reduceSnapshot(snapshot, event);
    const view = shown(snapshot);
    if (out.at(-1) !== view) out.push(view);
  }
  return out;
}

describe("a story without a plan, as a plan of one task", () => {
  it("journals its one task like a planned story's, commits on the story branch without a merge, and shows on GitHub as before", async () => {
    const s = await makeScenario();
    const base = await git(["rev-parse", "HEAD"], { cwd: s.repo });
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "complete"));
    expect(outcome.status).toBe("completed");
    const taskId = ofKind(journal, "run.started")[0]?.taskId ?? "";
    expect(taskId).toMatch(/^task-/);
    const taskEvents = journal.filter((event) => TASK_EVENTS.has(event.kind));
    expect(kinds(taskEvents)).toEqual(["task.planned", "task.started", "task.finished"]);
    for (const event of taskEvents) expect(event).toMatchObject({ taskId });
    expect(ofKind(journal, "task.planned")[0]).toMatchObject({
      title: "Greet the user",
      wave: 1,
      files: [],
      blockedBy: [],
      stages: ["implementer", "tester", "verifier", "documenter", "integrity"],
    });
    expect(ofKind(journal, "task.finished")[0]).toMatchObject({ outcome: "completed", attempt: 1, commit: outcome.commit });
    // One commit on the base, on the story branch itself: no task branch, no merge step.
    expect(await git(["rev-list", "--parents", "-n", "1", "harness/story-demo"], { cwd: s.repo })).toBe(`${outcome.commit ?? ""} ${base}`);
    expect(await git(["log", "--format=%s", `${base}..harness/story-demo`], { cwd: s.repo })).toBe("Story demo: Greet the user");

    const snapshot = journal.reduce(reduceSnapshot, emptySnapshot());
    expect(snapshot.planned).toBe(false);
    expect(snapshot.tasks.map((task) => task.id)).toEqual([taskId]);
    expect(planChecks(snapshot).map((check) => check.name)).toEqual([
      CHECK_NAMES.story,
      CHECK_NAMES.provision,
      "harness / verifier",
      CHECK_NAMES.cleanClone,
      CHECK_NAMES.integrity,
    ]);
    // The same states, in the same order, as the journal without the task events shows.
    expect(views(journal)).toEqual(views(journal.filter((event) => !TASK_EVENTS.has(event.kind))));
  });

  it("shows a blocked story as before: its task ends with the story, blocked with the story's class", async () => {
    const s = await makeScenario();
    const config = scriptedConfig(s, "complete");
    config.provision.command = "exit 7";
    const { outcome, journal } = await runScenario(s, config);
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "workspace-provision-failed" });
    expect(ofKind(journal, "task.finished")[0]).toMatchObject({ outcome: "blocked", failureClass: "workspace-provision-failed", detail: outcome.detail });
    const snapshot = journal.reduce(reduceSnapshot, emptySnapshot());
    expect(snapshot).toMatchObject({ planned: false, outcome: "blocked", failureClass: "workspace-provision-failed" });
    expect(snapshot.tasks).toEqual([expect.objectContaining({ state: "blocked", outcome: "blocked", failureClass: "workspace-provision-failed" })]);
    expect(views(journal)).toEqual(views(journal.filter((event) => !TASK_EVENTS.has(event.kind))));
  });
});
