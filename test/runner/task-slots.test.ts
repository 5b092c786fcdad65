import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JOURNAL_FILE, readJournal, type HistoryEvent } from "../../src/pipeline/index.js";
import type { JobLease } from "../../src/queue/index.js";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { storyDirName } from "../../src/workspace/index.js";
import { until } from "../support/poll.js";
import { realRunner, storyLease } from "./real-runner.js";
import { recordingLog } from "./recording-log.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { independentTasks, planBody, plannedHarnessYml } from "../support/plan-story.js";

/** The most tasks of one story that were running at once, read from its journal (task.started … task.finished). */
function mostAtOnce(journal: readonly HistoryEvent[]): number {
  let running = 0;
  let most = 0;
  for (const event of journal) {
    if (event.kind === "task.started" && event.wave > 0) most = Math.max(most, (running += 1));
    if (event.kind === "task.finished" && running > 0 && event.taskId !== "integration" && !event.kept) running -= 1;
  }
  return most;
}

describe("a plan's tasks at once on a runner shared by several stories", () => {
  const fake = useFakeGitHub();
  let root: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "harness-slots-"));
  });
  afterAll(async () => {
    rmSync(root, { recursive: true, force: true });
  });

  it("take only the runner's free slots: one at a time while another story holds the second of two slots, two at once once it is done", async () => {
    const out = join(root, "agent-out");
    mkdirSync(out);
    // The one agent of both repositories. A story without a plan holds its slot until the test releases it;
    // a plan task of a story that asks for it waits until both tasks of the wave run (so two at once is seen, not timed).
    const agent = [
      'out="$1"',
      'case "$HARNESS_TASK:$HARNESS_STAGE" in',
      '  task-*:implementer) : > "$out/holding"; n=0; until [ -f "$out/release" ]; do n=$((n+1)); [ $n -gt 2400 ] && exit 9; sleep 0.05; done; echo held > held.txt ;;',
      '  *:implementer) mkdir -p src; echo "$HARNESS_TASK" > "src/$HARNESS_TASK.txt"',
      '    if grep -q "MEET IN THE WAVE" "$HARNESS_PROMPT_FILE"; then : > "$out/$HARNESS_TASK.meets"; n=0; until [ -f "$out/a.meets" ] && [ -f "$out/b.meets" ]; do n=$((n+1)); [ $n -gt 2400 ] && exit 8; sleep 0.05; done; fi ;;',
      "esac",
      `[ "$HARNESS_STAGE" = verifier ] && printf '{"verdict":"pass","findings":[]}' > "$HARNESS_ARTIFACT_DIR/verdict.json"`,
      "exit 0",
      "",
    ].join("\n");
    const yml = plannedHarnessYml(`sh tools/agent.sh '${out}'`, 4);
    const files = { "README.md": "x\n", "tools/agent.sh": agent, ".github/harness.yml": yml };
    const holder = await fake.addRepository({ owner: "acme", name: "holder", files });
    const planned = await fake.addRepository({ owner: "acme", name: "waves", files });
    const plan = independentTasks(["a", "b"]);
    const lease = (repository: { id: number; cloneUrl: string }, name: string, title: string, body: string): JobLease => {
      const issue = fake.createIssue("acme", name, { title, body, user: "acme" });
      return storyLease(fake, { name, number: issue.number, repository, title, body });
    };
    const home = join(root, "home");
    // One runner, two slots (HARNESS_CONCURRENCY=2), running both stories; the agents may write only `out`.
    const worker = realRunner(fake, home, recordingLog().log, {
      taskSlots: 2,
      sandbox: new Sandbox(sandboxSettingsFromEnv({ ...process.env, HARNESS_SANDBOX_WRITE: out })),
    });
    const journalOf = (name: string, number: number): HistoryEvent[] => {
      const runs = join(home, "runs", storyDirName(`acme/${name}#${number}`));
      const [runId] = readdirSync(runs);
      return readJournal(join(runs, runId ?? "", JOURNAL_FILE));
    };
    const ended = (journal: HistoryEvent[]) =>
      journal.filter((event) => event.kind === "story.completed" || event.kind === "story.blocked").map((event) => event.kind);

    const holding = lease(holder, "holder", "Hold a slot", "No plan: one task.");
    const held = worker(holding, new AbortController().signal);
    await until("the holding story's agent", () => existsSync(join(out, "holding")));
    const busy = lease(planned, "waves", "Two parts, busy runner", planBody(plan));
    await worker(busy, new AbortController().signal);
    const busyJournal = journalOf("waves", busy.job.issue.number);
    expect(ended(busyJournal)).toEqual(["story.completed"]);
    // plan.concurrency 4, but the runner had one slot free (this story's own): the tasks ran one after the other.
    expect(mostAtOnce(busyJournal)).toBe(1);

    writeFileSync(join(out, "release"), "");
    await held;
    expect(ended(journalOf("holder", holding.job.issue.number))).toEqual(["story.completed"]);
    const idle = lease(planned, "waves", "Two parts, idle runner", planBody(plan, "MEET IN THE WAVE\n\n"));
    await worker(idle, new AbortController().signal);
    const idleJournal = journalOf("waves", idle.job.issue.number);
    expect(ended(idleJournal)).toEqual(["story.completed"]);
    // Both slots free: the two tasks of the wave ran at once (each waited for the other inside its slot).
    expect(mostAtOnce(idleJournal)).toBe(2);
    expect(fake.takeUnexpectedRequests()).toEqual([]);
  });
});
