/**
 * What a story costs beyond its agents and one run of its suite: `runStory` wall time ÷
 * (Σ agent seat time + one suite run), in one run, for three stories whose scripted agents
 * sleep `--agent-seconds` (2 s) and whose suite sleeps `--suite-seconds` (1 s):
 *
 *   (a) four seats (implementer, tester, verifier, documenter) on a story without a plan;
 *   (b) a planned story of three tasks in a chain (each waits for the one before it, so their
 *       seats run one after another and Σ seat time is the floor), documented once at the end;
 *   (c) an attempt the verifier fails, then the retried one that passes.
 *
 * Seat and suite times are measured by the scripts themselves (a start and an end stamp each),
 * so the denominator is what the agents and one suite run really took on this machine, under
 * this load. The sandbox is the operator's (on unless HARNESS_SANDBOX=off). Targets: ≤ 1.25×
 * for (a), ≤ 1.4× for (b) and (c). Prints the load average before and after.
 *
 *   npm run bench -- story-overhead [--agent-seconds 2] [--suite-seconds 1]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { exec } from "../src/exec/index.js";
import { loadWorkflow, parseHarnessConfig, runStory, type Reporter } from "../src/pipeline/index.js";
import { Sandbox, probeSandbox, sandboxSettingsFromEnv } from "../src/sandbox/index.js";
import { HARNESS_IDENTITY } from "../src/workspace/index.js";
import { meanSteps, storyTimelines } from "./lib/story-timeline.js";

const { values } = parseArgs({ options: { "agent-seconds": { type: "string", default: "2" }, "suite-seconds": { type: "string", default: "1" } } });
const AGENT_SECONDS = Number(values["agent-seconds"]);
const SUITE_SECONDS = Number(values["suite-seconds"]);

interface Story {
  name: string;
  target: number;
  body: string;
  /** What the verifier does on its first attempt. */
  firstVerdict: "pass" | "fail";
}

const PLAN = {
  tasks: [
    { id: "t1", title: "Part one", files: ["src/t1.txt"] },
    { id: "t2", title: "Part two", files: ["src/t2.txt"], blocked_by: ["t1"] },
    { id: "t3", title: "Part three", files: ["src/t3.txt"], blocked_by: ["t2"] },
  ],
};

const STORIES: Story[] = [
  { name: "(a) four seats", target: 1.25, body: "Change feature.txt.", firstVerdict: "pass" },
  { name: "(b) planned, three tasks", target: 1.4, body: `Three parts.\n\n\`\`\`harness-plan\n${JSON.stringify(PLAN)}\n\`\`\`\n`, firstVerdict: "pass" },
  { name: "(c) failed, then retried", target: 1.4, body: "Change feature.txt.", firstVerdict: "fail" },
];

/** One line `<what> <start ms> <end ms>` per seat or suite run, appended by the scripts. */
const stamp = (log: string, what: string, work: string): string => `s=$(date +%s%3N); ${work}; echo "${what} $s $(date +%s%3N)" >> '${log}'`;

/** The scripted agent: sleeps, then the implementer writes its file and the verifier gives its verdict. */
function agentCommand(log: string, story: Story): string {
  const verdict = (what: string) =>
    `echo '{"verdict":"${what}","findings":["${what === "fail" ? "not yet" : "fine"}"]}' > "$HARNESS_ARTIFACT_DIR/verdict.json"`;
  const verifier = story.firstVerdict === "fail" ? `if [ "$HARNESS_ATTEMPT" = 1 ]; then ${verdict("fail")}; else ${verdict("pass")}; fi` : verdict("pass");
  const work = [
    `sleep ${AGENT_SECONDS}`,
    `case "$HARNESS_STAGE" in implementer) mkdir -p src && echo "$HARNESS_ATTEMPT" > "src/\${HARNESS_TASK%%-*}.txt" ;; verifier) ${verifier} ;; esac`,
  ].join("; ");
  return stamp(log, "seat", work);
}

async function freshRepo(root: string, name: string): Promise<string> {
  const repo = join(root, name);
  mkdirSync(repo);
  writeFileSync(join(repo, "README.md"), "# bench\n");
  for (const argv of [
    ["git", "-c", "init.defaultBranch=main", "init", "-q"],
    ["git", "add", "-A"],
    ["git", "commit", "-q", "-m", "start"],
  ]) {
    const result = await exec(argv, { cwd: repo, env: { set: HARNESS_IDENTITY } });
    if (result.exitCode !== 0) throw new Error(`${argv.join(" ")} failed: ${result.tail}`);
  }
  return repo;
}

/** Runs one story in a fresh repository and HARNESS_HOME (nothing kept from another); returns its wall time and what the scripts measured. */
async function measure(
  root: string,
  story: Story,
  index: number,
): Promise<{ wallMs: number; seatMs: number; seats: number; suiteMs: number[]; steps: Array<[string, number]> }> {
  const dir = join(root, `story-${index}`);
  const log = join(dir, "stamps", "times.log");
  mkdirSync(join(dir, "stamps"), { recursive: true });
  writeFileSync(log, "");
  const repo = await freshRepo(dir, "repo");
  const config = parseHarnessConfig(
    [
      "agent:",
      `  command: ${JSON.stringify(agentCommand(log, story))}`,
      "test:",
      `  command: ${JSON.stringify(stamp(log, "suite", `sleep ${SUITE_SECONDS}`))}`,
      "provision:",
      '  command: "true"',
    ].join("\n"),
    "bench",
  );
  // The operator's sandbox, letting the scripts write their stamps (as an operator grants a folder).
  const sandbox = new Sandbox(sandboxSettingsFromEnv({ ...process.env, HARNESS_SANDBOX_WRITE: join(dir, "stamps") }));
  const quiet: Reporter = { onEvent: async () => undefined };
  const started = performance.now();
  const outcome = await runStory({
    sandbox,
    repoDir: repo,
    story: { id: `bench-${index}`, title: story.name, body: story.body },
    branch: `harness/bench-${index}`,
    baseRef: "HEAD",
    config,
    workflow: loadWorkflow(),
    harnessHome: join(dir, "home"),
    reporter: quiet,
    agentEnvAllow: [],
  });
  const wallMs = performance.now() - started;
  if (outcome.status !== "completed") throw new Error(`${story.name} blocked: ${outcome.failureClass ?? ""} ${outcome.detail ?? ""}`);
  const lines = readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line !== "");
  const spans = lines.map((line) => {
    const [what = "", start = "0", end = "0"] = line.split(" ");
    return { what, ms: Number(end) - Number(start) };
  });
  const seatSpans = spans.filter((span) => span.what === "seat");
  return {
    wallMs,
    seatMs: seatSpans.reduce((sum, span) => sum + span.ms, 0),
    seats: seatSpans.length,
    suiteMs: spans.filter((span) => span.what === "suite").map((span) => span.ms),
    // Where the time went between journal events: the seats' stages, and the harness's own steps.
    steps: meanSteps(storyTimelines(join(dir, "home"))).steps,
  };
}

const root = mkdtempSync(join(tmpdir(), "harness-bench-overhead-"));
try {
  const before = loadavg().map((x) => x.toFixed(1));
  console.log(`agents ${AGENT_SECONDS} s, suite ${SUITE_SECONDS} s, sandbox=${(await probeSandbox(new Sandbox(sandboxSettingsFromEnv()))).state}`);
  let index = 0;
  for (const story of STORIES) {
    const result = await measure(root, story, (index += 1));
    // One suite run: the shortest the scripts measured (every run sleeps the same).
    const oneSuite = Math.min(...result.suiteMs);
    const floor = result.seatMs + oneSuite;
    const ratio = result.wallMs / floor;
    const verdict = ratio <= story.target ? "meets" : "misses";
    console.log(
      `${story.name}: ${(result.wallMs / 1000).toFixed(2)} s ÷ (${result.seats} seats ${(result.seatMs / 1000).toFixed(2)} s + one suite ${(oneSuite / 1000).toFixed(2)} s) = ${ratio.toFixed(2)}× (target ≤ ${story.target}×, ${verdict}); suite runs: ${result.suiteMs.length}`,
    );
    const top = result.steps.slice(0, 8).map(([step, ms]) => `${step} ${(ms / 1000).toFixed(2)} s`);
    console.log(`  journal steps: ${top.join(", ")}`);
  }
  console.log(
    `load average (1, 5, 15 min): before ${before.join(" ")}, after ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
