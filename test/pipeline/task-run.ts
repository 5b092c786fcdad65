/**
 * A task as the stages see it, without a story around it: a real git repository standing in
 * for the task's worktree, a real run directory, journal and sandbox, and the real
 * collaborators unless a test wraps one. For tests of one check or one stage at a time, where
 * a whole story would cost seconds per mutant.
 */
import { join } from "node:path";
import { defaultDeps, Journal, loadWorkflow, parseHarnessConfig, readJournal, type HistoryEvent, type PipelineDeps } from "../../src/pipeline/index.js";
import { BudgetMeter } from "../../src/pipeline/budget.js";
import type { Budget } from "../../src/pipeline/config.js";
import { createRunLayout } from "../../src/pipeline/run-dir.js";
import { EventSink } from "../../src/pipeline/sink.js";
import type { TaskRun } from "../../src/pipeline/task.js";
import { AgentBoots } from "../../src/pipeline/agent-boots.js";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { git } from "../../src/workspace/index.js";
import { initRepo, makeTempDir } from "../support/tmp.js";
import { recordingReporter } from "./helpers.js";

export interface TaskBench {
  task: TaskRun;
  /** Everything the task's sink journaled so far, read back from the journal file. */
  journal: () => HistoryEvent[];
  /** The events the reporter was handed, in order. */
  reported: HistoryEvent[];
}

/** The real default sandbox, or one turned off (`HARNESS_SANDBOX=off`). */
export function sandboxOf(enabled: boolean): Sandbox {
  return new Sandbox(sandboxSettingsFromEnv({ ...process.env, HARNESS_SANDBOX: enabled ? "on" : "off" }));
}

/** A task whose worktree is a fresh repository holding `files` in one commit. */
export async function makeTask(
  options: { yaml?: string; files?: Record<string, string>; sandbox?: Sandbox; deps?: Partial<PipelineDeps>; signal?: AbortSignal; budget?: Budget } = {},
): Promise<TaskBench> {
  const dir = makeTempDir("harness-task-");
  const path = join(dir, "worktree");
  await initRepo(path, { "README.md": "# demo\n", ...options.files });
  const base = await git(["rev-parse", "HEAD"], { cwd: path, readOnly: true });
  const home = join(dir, "home");
  const layout = createRunLayout(home, "demo", "20261201T000000Z-000000");
  const reporter = recordingReporter();
  const clock = () => new Date();
  const sink = new EventSink(new Journal(layout.journal), reporter, join(layout.logs, "reporter.log"), clock);
  const config = parseHarnessConfig(options.yaml ?? 'test:\n  command: "true"\nprovision:\n  command: "true"', "harness.yml");
  const workflow = loadWorkflow();
  const task: TaskRun = {
    taskId: "task-demo",
    story: { id: "demo", title: "Demo", body: "" },
    config,
    workflow,
    maxAttempts: 1,
    layout,
    worktree: { taskId: "task-demo", path, branch: "main", base },
    deps: { ...defaultDeps(), ...options.deps },
    sink,
    harnessHome: home,
    agentEnv: [],
    clock,
    sandbox: options.sandbox ?? sandboxOf(true),
    redact: (text) => text,
    budget: new BudgetMeter(options.budget ?? {}),
    seatsLaunched: 0,
    agentBoots: new AgentBoots(),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  return { task, journal: () => readJournal(layout.journal), reported: reporter.events };
}
