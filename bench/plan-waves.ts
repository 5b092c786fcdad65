/**
 * Wall time of a planned story: four independent tasks whose scripted agents take 2 seconds
 * each (implementer and verifier seats; tester and documenter disabled), run as one plan at
 * concurrency 1, 2 and 4, against the same four tasks run one after another as four stories
 * without a plan, in the same process and the same run (rounds interleave the variants).
 * Reports the median wall time of each, the speed-up against the sequential baseline, and
 * where the rest goes (the time beyond the agents' own seconds on the critical path).
 *
 *   node --import tsx bench/plan-waves.ts [--reps 2] [--agent-seconds 2]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { exec } from "../src/exec/index.js";
import { loadWorkflow, parseHarnessConfig, readJournal, runStory, type HistoryEvent, type Reporter } from "../src/pipeline/index.js";
import { HARNESS_IDENTITY } from "../src/workspace/index.js";

const { values } = parseArgs({ options: { reps: { type: "string", default: "2" }, "agent-seconds": { type: "string", default: "2" } } });
const REPS = Number(values.reps);
const SECONDS = Number(values["agent-seconds"]);
const TASKS = ["t1", "t2", "t3", "t4"];

// Each agent sleeps, then the implementer writes its task's file and the verifier passes.
const AGENT = `sleep ${SECONDS}; case "$HARNESS_STAGE" in implementer) mkdir -p src && echo "$HARNESS_TASK" > "src/\${HARNESS_TASK%%-*}.txt" ;; verifier) echo '{"verdict":"pass","findings":[]}' > "$HARNESS_ARTIFACT_DIR/verdict.json" ;; esac`;
const CONFIG = parseHarnessConfig(
  [
    "agent:",
    `  command: ${JSON.stringify(AGENT)}`,
    "seats:",
    "  tester: { enabled: false }",
    "  documenter: { enabled: false }",
    "test:",
    '  command: "true"',
    "provision:",
    '  command: "true"',
  ].join("\n"),
  "bench",
);
const quiet: Reporter = { onEvent: async () => undefined };

async function run(argv: string[], cwd: string): Promise<void> {
  const result = await exec(argv, { cwd, env: { set: HARNESS_IDENTITY } });
  if (result.exitCode !== 0) throw new Error(`${argv.join(" ")} failed: ${result.tail}`);
}

async function freshRepo(root: string, name: string): Promise<string> {
  const repo = join(root, name);
  mkdirSync(repo);
  writeFileSync(join(repo, "README.md"), "# bench\n");
  await run(["git", "-c", "init.defaultBranch=main", "init", "-q"], repo);
  await run(["git", "add", "-A"], repo);
  await run(["git", "commit", "-q", "-m", "start"], repo);
  return repo;
}

const planBody = `\`\`\`harness-plan\n${JSON.stringify({ tasks: TASKS.map((id) => ({ id, title: `Task ${id}`, files: [`src/${id}.txt`] })) })}\n\`\`\`\n`;

async function planned(root: string, concurrency: number, rep: number): Promise<{ ms: number; journal: HistoryEvent[] }> {
  const repo = await freshRepo(root, `plan-c${concurrency}-${rep}`);
  const started = performance.now();
  const outcome = await runStory({
    repoDir: repo, story: { id: `plan-${concurrency}-${rep}`, title: "Four tasks", body: planBody }, branch: "harness/story-bench", baseRef: "HEAD",
    config: CONFIG, workflow: loadWorkflow(), harnessHome: join(root, "home"), reporter: quiet, agentEnvAllow: [], concurrency,
  });
  const ms = performance.now() - started;
  if (outcome.status !== "completed") throw new Error(`planned story ${outcome.status}: ${outcome.detail ?? ""}`);
  return { ms, journal: readJournal(join(outcome.runDir, "execution-history.ndjson")) };
}

async function sequential(root: string, rep: number): Promise<number> {
  const repo = await freshRepo(root, `seq-${rep}`);
  const started = performance.now();
  for (const id of TASKS) {
    const outcome = await runStory({
      repoDir: repo, story: { id: `${id}-${rep}`, title: `Task ${id}`, body: "" }, branch: `harness/story-${id}`, baseRef: "HEAD",
      config: CONFIG, workflow: loadWorkflow(), harnessHome: join(root, "home"), reporter: quiet, agentEnvAllow: [],
    });
    if (outcome.status !== "completed") throw new Error(`story ${id} ${outcome.status}: ${outcome.detail ?? ""}`);
  }
  return performance.now() - started;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

/** Milliseconds between a kind's first and a kind's last event of the journal, summed over tasks. */
function phaseTimes(journal: HistoryEvent[]): { integrationMs: number; merges: number } {
  const at = (event: HistoryEvent | undefined): number => (event ? Date.parse(event.at) : 0);
  const integrationStart = journal.find((event) => event.kind === "task.started" && event.taskId === "integration");
  const end = journal.at(-1);
  return { integrationMs: at(end) - at(integrationStart), merges: journal.filter((event) => event.kind === "wave.merged").length };
}

const root = mkdtempSync(join(tmpdir(), "bench-plan-waves-"));
try {
  const times: Record<string, number[]> = { sequential: [], c1: [], c2: [], c4: [] };
  let integration: number[] = [];
  for (let rep = 0; rep < REPS; rep += 1) {
    // Interleaved: every round measures the baseline and each variant once, in a rotating order.
    const order = ["sequential", "c1", "c2", "c4"];
    for (let turn = 0; turn < order.length; turn += 1) {
      const variant = order[(turn + rep) % order.length] ?? "sequential";
      if (variant === "sequential") times.sequential?.push(await sequential(root, rep));
      else {
        const result = await planned(root, Number(variant.slice(1)), rep);
        times[variant]?.push(result.ms);
        integration.push(phaseTimes(result.journal).integrationMs);
      }
    }
  }
  const base = median(times.sequential ?? []);
  const agentSeconds = 2 * SECONDS; // implementer + verifier per task
  console.log(`four independent tasks, ${SECONDS} s scripted agents (implementer + verifier), ${REPS} rounds, medians:`);
  console.log(`sequential (four stories one after another): ${(base / 1000).toFixed(1)} s (agents alone: ${4 * agentSeconds} s)`);
  for (const concurrency of [1, 2, 4]) {
    const ms = median(times[`c${concurrency}`] ?? []);
    const ideal = Math.ceil(4 / concurrency) * agentSeconds * 1000;
    console.log(`plan, concurrency ${concurrency}: ${(ms / 1000).toFixed(1)} s, speed-up ×${(base / ms).toFixed(2)}, beyond the agents' critical path ${((ms - ideal) / 1000).toFixed(1)} s`);
  }
  integration = integration.sort((a, b) => a - b);
  console.log(`integration step (merged-branch worktree, provisioning, story-level clean clone): median ${(median(integration) / 1000).toFixed(2)} s`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
