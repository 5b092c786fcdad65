/**
 * Builders of a planned story for tests that run one through a real runner: the repository's
 * `.github/harness.yml` with a plan's concurrency, a plan of independent tasks, and an issue body
 * carrying the plan in its `harness-plan` block, as a maintainer writes it.
 */

/** One task of a plan as the block spells it (snake_case, as people write it). */
export interface PlanTaskSpec {
  id: string;
  title: string;
  description: string;
  files: string[];
  blocked_by: string[];
}

/**
 * A `.github/harness.yml` whose agent is `agentCommand`, whose suite and provisioning do nothing,
 * with one attempt per task and `plan.concurrency` (4 unless told).
 */
export function plannedHarnessYml(agentCommand: string, concurrency = 4): string {
  return [
    "agent:",
    `  command: ${JSON.stringify(agentCommand)}`,
    "test:",
    '  command: "true"',
    "provision:",
    '  command: "true"',
    "max_attempts: 1",
    "plan:",
    `  concurrency: ${concurrency}`,
    "",
  ].join("\n");
}

/** A plan of tasks that depend on nothing (one wave): task `<id>` writes `src/<id>.txt`. */
export function independentTasks(ids: readonly string[] = ["a", "b"]): { tasks: PlanTaskSpec[] } {
  return { tasks: ids.map((id) => ({ id, title: `Part ${id}`, description: `Write src/${id}.txt`, files: [`src/${id}.txt`], blocked_by: [] })) };
}

/** An issue body: `before` (if any), then the plan in its `harness-plan` block. */
export function planBody(plan: unknown, before = ""): string {
  return `${before}\`\`\`harness-plan\n${JSON.stringify(plan)}\n\`\`\`\n`;
}
