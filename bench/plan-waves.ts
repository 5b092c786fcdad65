/**
 * Wall time of a planned story: four independent tasks whose scripted agents take 2 seconds
 * each (implementer and verifier seats; tester and documenter disabled), run as one plan at
 * concurrency 1, 2 and 4, against the same four tasks run one after another as four stories
 * without a plan, in the same process and the same run, each concurrency paired with the
 * sequential baseline A B B A (bench/lib/paired.ts).
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
import { formatPaired, measurePaired, median } from "./lib/paired.js";
import { sandboxFromEnv } from "../src/sandbox/index.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const sandbox = sandboxFromEnv();

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
    sandbox,
    repoDir: repo,
    story: { id: `plan-${concurrency}-${rep}`, title: "Four tasks", body: planBody },
    branch: "harness/story-bench",
    baseRef: "HEAD",
    config: CONFIG,
    workflow: loadWorkflow(),
    harnessHome: join(root, "home"),
    reporter: quiet,
    agentEnvAllow: [],
    concurrency,
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
      sandbox,
      repoDir: repo,
      story: { id: `${id}-${rep}`, title: `Task ${id}`, body: "" },
      branch: `harness/story-${id}`,
      baseRef: "HEAD",
      config: CONFIG,
      workflow: loadWorkflow(),
      harnessHome: join(root, "home"),
      reporter: quiet,
      agentEnvAllow: [],
    });
    if (outcome.status !== "completed") throw new Error(`story ${id} ${outcome.status}: ${outcome.detail ?? ""}`);
  }
  return performance.now() - started;
}

/** Milliseconds between a kind's first and a kind's last event of the journal, summed over tasks. */
function phaseTimes(journal: HistoryEvent[]): { integrationMs: number; merges: number } {
  const at = (event: HistoryEvent | undefined): number => (event ? Date.parse(event.at) : 0);
  const integrationStart = journal.find((event) => event.kind === "task.started" && event.taskId === "integration");
  const end = journal.at(-1);
  return { integrationMs: at(end) - at(integrationStart), merges: journal.filter((event) => event.kind === "wave.merged").length };
}

const root = mkdtempSync(join(tmpdir(), "bench-plan-waves-"));
try {
  const integration: number[] = [];
  const agentSeconds = 2 * SECONDS; // implementer + verifier per task
  let round = 0;
  console.log(
    `four independent tasks, ${SECONDS} s scripted agents (implementer + verifier), ${REPS} paired repetitions per concurrency (A B B A against four stories one after another)`,
  );
  for (const concurrency of [1, 2, 4]) {
    const plan = async (): Promise<number> => {
      const result = await planned(root, concurrency, (round += 1));
      integration.push(phaseTimes(result.journal).integrationMs);
      return result.ms;
    };
    const result = await measurePaired(plan, async () => sequential(root, (round += 1)), REPS, { warmup: false });
    const ideal = Math.ceil(4 / concurrency) * agentSeconds * 1000;
    console.log(formatPaired(`plan at concurrency ${concurrency} ÷ sequential`, result));
    console.log(
      `  speed-up ×${(1 / result.medianRatio).toFixed(2)} (median of pairs); beyond the agents' critical path ${((result.medianSubjectMs - ideal) / 1000).toFixed(1)} s; agents alone, sequentially: ${4 * agentSeconds} s`,
    );
  }
  console.log(`integration step (merged-branch worktree, provisioning, story-level clean clone): median ${(median(integration) / 1000).toFixed(2)} s`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
