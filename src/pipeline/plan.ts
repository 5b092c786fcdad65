/**
 * A story's plan: tasks with the files they may change and what blocks them, grouped into
 * waves (dependency levels). Read from a fenced block with the info string `harness-plan` in
 * the story's text and validated by `schemas/plan.schema.json`; a plan with a cycle, an
 * unknown or repeated id, or two tasks of one wave whose files overlap is refused before
 * anything runs, naming the task ids. Pure: no git, no files.
 */
import { schemas } from "../schema/index.js";
import { fencedBlocks } from "../text/index.js";
import { PlanError } from "./errors.js";
import { patternsOverlap } from "./globs.js";
import { INTEGRATION_TASK } from "./snapshot.js";

/** The fence info string that marks a plan. */
export const PLAN_FENCE = "harness-plan";

/** One task of a plan, normalised to camelCase. */
export interface PlanTask {
  id: string;
  title: string;
  description: string;
  files: string[];
  blockedBy: string[];
  /** 1-based dependency level. */
  wave: number;
}

/** A validated plan: its tasks in plan order, and its waves (task ids, in plan order). */
export interface Plan {
  tasks: PlanTask[];
  waves: string[][];
}

interface RawPlan {
  tasks: Array<{ id: string; title: string; description?: string; files: string[]; blocked_by?: string[] }>;
}

/**
 * The text of the story's `harness-plan` fenced block, or undefined when it has none. Two
 * plan blocks are refused: which one counts would be a guess.
 */
export function extractPlanBlock(markdown: string, source: string): string | undefined {
  const plans = fencedBlocks(markdown).filter((block) => block.fence.info === PLAN_FENCE);
  if (plans.some((block) => !block.closed)) throw new PlanError(source, "$", `has a \`${PLAN_FENCE}\` block that is never closed`);
  if (plans.length > 1) throw new PlanError(source, "$", `has ${plans.length} \`${PLAN_FENCE}\` blocks; give one`);
  return plans[0]?.body;
}

/** Reads the plan of a story's text; undefined when it carries none (a plan of one task). */
export function readStoryPlan(markdown: string, source: string): Plan | undefined {
  const block = extractPlanBlock(markdown, source);
  if (block === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(block);
  } catch (error) {
    throw new PlanError(source, "$", `\`${PLAN_FENCE}\` block is not valid JSON: ${(error as Error).message}`);
  }
  return parsePlan(data, source);
}

/** Validates plan data (a fenced block's JSON, or a planner's `plan.json`) and computes its waves. */
export function parsePlan(data: unknown, source: string): Plan {
  const issues = schemas().issues("plan", data);
  if (issues.length > 0) throw new PlanError(source, issues[0]?.path ?? "$", issues.map((issue) => `${issue.path} ${issue.message}`).join("; "));
  const raw = data as RawPlan;
  const seen = new Set<string>();
  raw.tasks.forEach((task, index) => {
    if (task.id === INTEGRATION_TASK)
      throw new PlanError(source, `$.tasks[${index}].id`, `'${task.id}' is reserved for the story's integration step`, [task.id]);
    if (seen.has(task.id)) throw new PlanError(source, `$.tasks[${index}].id`, `repeats the task id '${task.id}'`, [task.id]);
    seen.add(task.id);
  });
  raw.tasks.forEach((task, index) => {
    (task.blocked_by ?? []).forEach((blocker, at) => {
      if (!seen.has(blocker))
        throw new PlanError(source, `$.tasks[${index}].blocked_by[${at}]`, `task '${task.id}' is blocked by '${blocker}', which is not a task of the plan`, [
          task.id,
          blocker,
        ]);
      if (blocker === task.id) throw new PlanError(source, `$.tasks[${index}].blocked_by[${at}]`, `task '${task.id}' is blocked by itself`, [task.id]);
    });
  });
  const waveOf = levels(raw, source);
  const tasks: PlanTask[] = raw.tasks.map((task) => ({
    id: task.id,
    title: task.title,
    description: task.description ?? "",
    files: [...task.files],
    blockedBy: [...new Set(task.blocked_by ?? [])],
    wave: waveOf.get(task.id) ?? 1,
  }));
  const depth = Math.max(...tasks.map((task) => task.wave));
  const waves = Array.from({ length: depth }, (_, index) => tasks.filter((task) => task.wave === index + 1).map((task) => task.id));
  refuseOverlaps(tasks, source);
  return { tasks, waves };
}

/** Each task's dependency level; a cycle is refused with its task ids. */
function levels(raw: RawPlan, source: string): Map<string, number> {
  const byId = new Map(raw.tasks.map((task) => [task.id, task]));
  const level = new Map<string, number>();
  const visiting: string[] = [];
  const visit = (id: string): number => {
    const known = level.get(id);
    if (known !== undefined) return known;
    const cycleStart = visiting.indexOf(id);
    if (cycleStart >= 0) {
      const cycle = [...visiting.slice(cycleStart), id];
      throw new PlanError(source, "$.tasks", `has a cycle of blocked_by: ${cycle.join(" → ")}`, cycle.slice(0, -1));
    }
    visiting.push(id);
    const blockers = byId.get(id)?.blocked_by ?? [];
    const value = 1 + Math.max(0, ...blockers.map(visit));
    visiting.pop();
    level.set(id, value);
    return value;
  };
  raw.tasks.forEach((task) => visit(task.id));
  return level;
}

/** Two tasks of one wave run side by side: their files must not overlap. */
function refuseOverlaps(tasks: readonly PlanTask[], source: string): void {
  tasks.forEach((task, index) => {
    for (const other of tasks.slice(index + 1)) {
      if (other.wave !== task.wave) continue;
      for (const mine of task.files) {
        const theirs = other.files.find((pattern) => patternsOverlap(mine, pattern));
        if (theirs !== undefined) {
          throw new PlanError(
            source,
            "$.tasks",
            `tasks '${task.id}' and '${other.id}' run in wave ${task.wave} and their files overlap ('${mine}' and '${theirs}'); make one blocked_by the other or split the files`,
            [task.id, other.id],
          );
        }
      }
    }
  });
}
