import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseTemplate } from "./context.js";
import { HARNESS_ROOT } from "./workflow-types.js";
import { BudgetMeter, effectiveBudget, operatorBudget } from "./budget.js";
import { readBudgetSpent, writeBudgetSpent } from "./budget-ledger.js";
import { taskWorktreePath } from "../workspace/index.js";
import { defaultDeps } from "./deps.js";
import { Journal } from "./journal.js";
import { createRunLayout, newRunId } from "./run-dir.js";
import { preflight, PreflightError } from "./preflight/index.js";
import { agentsThatCannotStart } from "./agent-starts.js";
import { EventSink } from "./sink.js";
import type { RunContext } from "./task.js";
import type { RunStoryArgs, StoryOutcome } from "./types.js";
import { runStartedEvent } from "./run-started.js";
import { planStages } from "./workflow.js";
import { ConfigError, PlanError } from "./errors.js";
import { PLAN_FENCE, readStoryPlan, type Plan } from "./plan.js";
import { oneTaskId } from "./one-task.js";
import { runPlannedStory, runUnplannedStory } from "./plan-story.js";

/** The implementer's template in a revision round. */
export const REVISER_PROMPT_PATH = join(HARNESS_ROOT, "prompts", "reviser.md");

/**
 * Takes a story through its workflow and returns how it ended: journals `run.started`, reads
 * the story's plan, runs preflight (a configuration mistake blocks before anything is
 * provisioned), then hands the story's tasks to its plan, its planner, or (a story without a
 * plan) a plan of one task. Each task runs in a fresh, provisioned worktree; failed attempts go
 * back to the workflow's retry stage until the attempt ceiling; infrastructure failures block
 * at once. Every step is journaled in the run directory and handed to the reporter. The
 * outcome is always committed to the story branch.
 */
export async function runStory(args: RunStoryArgs): Promise<StoryOutcome> {
  const clock = args.clock ?? (() => new Date());
  const deps = { ...defaultDeps(), ...args.deps };
  const sandbox = args.sandbox;
  const runId = newRunId(clock());
  const layout = createRunLayout(args.harnessHome, args.story.id, runId);
  const sink = new EventSink(new Journal(layout.journal), args.reporter, join(layout.logs, "reporter.log"), clock);
  const taskId = oneTaskId(runId);
  const maxAttempts = args.config.maxAttempts ?? args.workflow.maxAttempts;
  const outcomeBase = { branch: args.branch, runDir: layout.root, worktree: taskWorktreePath(args.harnessHome, args.story.id, taskId) };
  // The plan is read before anything runs: a refused plan never gets a worktree.
  let plan: Plan | undefined;
  let planError: PlanError | undefined;
  try {
    plan = readStoryPlan(args.story.body, `the story's ${PLAN_FENCE} block`);
  } catch (error) {
    if (!(error instanceof PlanError)) throw error;
    planError = error;
  }
  // A workflow that starts with a planner runs as a plan even when the story brings none.
  const planning = planStages(args.workflow).length > 0;
  const single = plan === undefined && planError === undefined && !planning;
  await sink.emit(
    runStartedEvent({
      story: args.story,
      runId,
      workflow: args.workflow,
      maxAttempts,
      readmission: args.readmission ?? false,
      ...(single ? { taskId } : {}),
      unsandboxed: !sandbox.settings.enabled,
      network: networkOf(sandbox.netPolicyOf(true)),
    }),
  );

  let budget = new BudgetMeter({});
  try {
    if (planError) throw planError;
    // Preflight: a configuration mistake blocks before anything is provisioned or launched.
    const problems = await preflight({
      config: args.config,
      source: args.configSource ?? "configuration",
      workflow: args.workflow,
      operatorAllow: args.agentEnvAllow,
      base: { repoDir: args.repoDir, ref: args.baseRef },
      // A program the sandbox does not show cannot start there: refused here, named, not three failed attempts.
      sandboxSees: (path) => sandbox.canRun(path),
    });
    if (problems.length > 0) throw new PreflightError(problems);
    // The repository's budget within the operator's ceilings: the lower wins, a repository cannot raise one.
    budget = new BudgetMeter(effectiveBudget(args.config.budget, args.budgetCeilings ?? operatorBudget(process.env)));
  } catch (error) {
    if (!(error instanceof ConfigError) && !(error instanceof PlanError)) throw error;
    await sink.emit({ kind: "story.blocked", ...(single ? { taskId } : {}), failureClass: "config-invalid", detail: error.message });
    return { ...outcomeBase, status: "blocked", failureClass: "config-invalid", detail: error.message };
  }
  // What the story's earlier runs spent counts too: a retry or a revision round does not restart the budget.
  const earlier = readBudgetSpent(args.harnessHome, args.story.id);
  if (earlier.problem !== undefined && (budget.budget.maxTokens !== undefined || budget.budget.maxAgentMs !== undefined)) {
    // Failing closed: what was spent is unknown, so it is not taken to be nothing.
    const detail = `the story's agent budget cannot be counted: ${earlier.problem}; remove the file to start the count again`;
    await sink.emit({ kind: "story.blocked", ...(single ? { taskId } : {}), failureClass: "budget-exhausted", detail });
    return { ...outcomeBase, status: "blocked", failureClass: "budget-exhausted", detail };
  }
  const keep = (totals: ReturnType<BudgetMeter["totals"]>): void => writeBudgetSpent(args.harnessHome, { storyId: args.story.id, ...totals }, clock());
  budget = new BudgetMeter(budget.budget, earlier.spent, keep);
  keep(budget.totals());
  // Every seat's CLI is started once in the sandbox: one that cannot start is the agent's infrastructure, said in its own words, before any seat.
  const cannotStart = await agentsThatCannotStart(args.config, args.workflow, sandbox, layout.logs, args.harnessHome);
  if (cannotStart !== undefined) {
    await sink.emit({ kind: "story.blocked", ...(single ? { taskId } : {}), failureClass: "agent-unavailable", detail: cannotStart });
    return { ...outcomeBase, status: "blocked", failureClass: "agent-unavailable", detail: cannotStart };
  }
  // Names the agents receive: the operator's allowlist ∩ the repository's `agent.env`. Preflight
  // has refused every other name already; the intersection stays so that it never rests on that alone.
  const allowed = new Set(args.agentEnvAllow);
  // Stryker disable next-line ConditionalExpression,MethodExpression: preflight refuses a name outside the allowlist before this line
  const agentEnv = args.config.agent.env.filter((name) => allowed.has(name));
  const context: RunContext = {
    story: args.story,
    ...(args.revision ? { revision: { prompt: args.revision, template: checkedTemplate(REVISER_PROMPT_PATH), stageId: args.workflow.retryStage } } : {}),
    config: args.config,
    workflow: args.workflow,
    maxAttempts,
    deps,
    sink,
    harnessHome: args.harnessHome,
    agentEnv,
    clock,
    sandbox,
    redact: args.redact ?? ((text) => text),
    budget,
    ...(args.signal ? { signal: args.signal } : {}),
    ...(args.acceptIntegrity !== undefined ? { acceptIntegrity: args.acceptIntegrity } : {}),
    ...(args.integrityBase !== undefined ? { integrityBase: args.integrityBase } : {}),
  };
  const base = { args, runId, context, layout };
  return plan || planning ? runPlannedStory(base, plan) : runUnplannedStory(base);
}

/**
 * A prompt template read from `path` (`prompts/reviser.md` for a revision round), checked like a
 * workflow's templates: an unknown placeholder is refused, naming the file, never left blank.
 */
export function checkedTemplate(path: string): string {
  const template = readFileSync(path, "utf8");
  const { unknown } = parseTemplate(template);
  if (unknown.length > 0) throw new Error(`${path} uses unknown placeholders: ${unknown.join(", ")}`);
  return template;
}

/** The network policy of networked steps, as run.started records it. */
function networkOf(policy: string): "own" | "egress" | "host" {
  return policy === "egress" || policy === "host" ? policy : "own";
}
