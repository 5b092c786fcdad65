import type { RevisionPrompt } from "./context.js";
import type { Sandbox } from "../sandbox/index.js";
import type { Budget, HarnessConfig } from "./config.js";
import type { PipelineDeps } from "./deps.js";
import type { FailureClass, Reporter } from "./events.js";
import type { TaskSlots } from "./task-slots.js";
import type { Workflow } from "./workflow-types.js";

/** The story to run. `id` is "42" for issue #42, or a slug for `harness run`. */
export interface StoryInput {
  id: string;
  title: string;
  body: string;
}

export interface RunStoryArgs {
  /** A local git repository (the runner's clone, or the user's repository for `harness run`). */
  repoDir: string;
  story: StoryInput;
  /** Created from `baseRef` if it does not exist; otherwise its tip is the base. */
  branch: string;
  baseRef: string;
  config: HarnessConfig;
  /** The file `config` came from, named by preflight problems (default "configuration"). */
  configSource?: string;
  workflow: Workflow;
  harnessHome: string;
  reporter: Reporter;
  /** Environment names the operator allows agents to receive. */
  agentEnvAllow: readonly string[];
  /**
   * A revision of the story's open pull request: the implementer stage (the workflow's retry
   * stage) runs `prompts/reviser.md` with this feedback, then the later stages as usual.
   */
  revision?: RevisionPrompt;
  /** retry-blocked: fresh worktree, fresh attempt budget, earlier history kept. */
  readmission?: boolean;
  clock?: () => Date;
  signal?: AbortSignal;
  /** Where repository code runs: the operator's sandbox, resolved once at the edge (app.ts, cli/). */
  sandbox: Sandbox;
  /** Tasks of a plan run side by side (`harness run --concurrency`); `plan.concurrency` of the configuration when absent. */
  concurrency?: number;
  /** The runner's own limit on tasks at once; a plan's concurrency never exceeds it. */
  taskSlots?: number;
  /**
   * The runner's task slots, shared across the stories it runs, of which the caller holds one
   * for this story: a plan's further tasks at once each take a free one. Without it, the story
   * has `taskSlots` to itself.
   */
  slots?: TaskSlots;
  /**
   * A writer accepted the test-integrity findings of this run (`/harness accept-integrity`,
   * `harness run --accept-integrity`): their login, journaled with each accepted finding.
   */
  acceptIntegrity?: string;
  /**
   * The ref the story started from (the default branch): the integrity gate compares the work
   * with its merge base, so work committed by an earlier, blocked run is judged again. The
   * task's own base when absent. A commit, or a ref as the task's worktree resolves it.
   */
  integrityBase?: string;
  /** Collaborators; the real ones when absent. */
  deps?: Partial<PipelineDeps>;
  /** The operator's budget ceilings; read from HARNESS_MAX_TURNS_PER_SEAT, HARNESS_MAX_AGENT_MINUTES, HARNESS_MAX_TOKENS when absent. */
  budgetCeilings?: Budget;
  /** Removes the App's secrets from what is kept of agents (their transcripts and logs); none when absent. */
  redact?: (text: string) => string;
}

export interface StoryOutcome {
  status: "completed" | "blocked";
  failureClass?: FailureClass;
  detail?: string;
  branch: string;
  commit?: string;
  runDir: string;
  /**
   * The task's worktree; removed once the outcome is committed (the branch keeps the work).
   * With a plan: the integration step's worktree (each task had its own, journaled in `worktree.created`).
   */
  worktree: string;
  /** With a plan: the tasks that ended blocked (their own class, or `blocked-by-dependency`). */
  blockedTasks?: string[];
}
