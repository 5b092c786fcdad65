/**
 * The App's path from a `story` label to its first implementer, against the time provisioning
 * takes (issue #36's target: label → implementer ≤ provisioning + 1.5 s). The App runs as a real
 * server (`harness serve`) against the fake GitHub; the repository provisions with a fixed
 * `sleep` standing in for an install, so what is left of the path is the App's own: the
 * installation token, the repository cache, the start commit, the worktree, the sandbox and
 * preflight (the draft pull request and every report go to GitHub beside them). Both figures come from the same story: the label's POST
 * (wall clock) and the run's journal (`provision.succeeded`'s duration, the implementer's
 * `stage.started`). The baseline is provisioning itself, measured in the same run.
 *
 * `--throttle on` runs the App with GitHub.com's client-side pacing (writes one second apart), as
 * the App runs by default; off (the default here) measures the App's own work alone.
 *
 *   node --import tsx bench/label-to-implementer.ts [--stories 5] [--provision-ms 1000] [--throttle on]
 */
import { readdirSync, readFileSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { JOURNAL_FILE } from "../src/pipeline/index.js";
import { startFakeGitHub } from "../test/support/fake-github/index.js";
import { startApp } from "../test/e2e/app-process.js";
import { addStoryRepo, harnessYml, labelNewIssue, reportsDelivered, storyRunsDir } from "../test/e2e/scenario.js";
import { median } from "./lib/paired.js";

interface Sample {
  toImplementerMs: number;
  provisionMs: number;
  /** Label → the pipeline's first event (run.started): token, repository cache, start commit (a new story's draft pull request opens beside the pipeline). */
  toRunMs: number;
}

/** The story's journal events (one run per story here). */
function journal(home: string, repo: string, issue: number): Array<Record<string, unknown>> {
  const runs = storyRunsDir(home, repo, issue);
  const [run] = readdirSync(runs);
  if (run === undefined) throw new Error(`no run of issue ${issue} in ${runs}`);
  return readFileSync(join(runs, run, JOURNAL_FILE), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function sampleOf(events: Array<Record<string, unknown>>, labelledAt: number): Sample {
  const implementer = events.find((event) => event.kind === "stage.started" && event.stage === "implementer");
  const provision = events.find((event) => event.kind === "provision.succeeded" && event.phase === "worktree");
  const started = events.find((event) => event.kind === "run.started");
  if (!implementer || !provision || !started) throw new Error("the journal has no run start, implementer start or worktree provisioning");
  const at = (event: Record<string, unknown>) => Date.parse(String(event.at)) - labelledAt;
  return { toImplementerMs: at(implementer), provisionMs: Number(provision.durationMs), toRunMs: at(started) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { stories: { type: "string", default: "5" }, "provision-ms": { type: "string", default: "1000" }, throttle: { type: "string", default: "off" } },
  });
  if (values.throttle !== "on" && values.throttle !== "off") throw new Error(`--throttle must be on or off; got '${values.throttle}'`);
  const stories = Math.max(2, Number(values.stories));
  const provisionSeconds = (Number(values["provision-ms"]) / 1000).toFixed(3);
  const root = mkdtempSync(join(tmpdir(), "harness-bench-implementer-"));
  const home = join(root, "home");
  const fake = await startFakeGitHub();
  const load = loadavg()[0] ?? 0;
  try {
    await addStoryRepo(fake, "widgets", harnessYml({ provision: `sleep ${provisionSeconds}` }));
    const app = await startApp({ fake, home, workDir: root, env: { HARNESS_GITHUB_THROTTLE: values.throttle } });
    const samples: Sample[] = [];
    try {
      for (let story = 1; story <= stories; story += 1) {
        const labelledAt = Date.now();
        const { number } = await labelNewIssue(fake, app, "widgets", `Story ${story}`);
        await reportsDelivered(home);
        samples.push(sampleOf(journal(home, "widgets", number), labelledAt));
      }
    } finally {
      await app.stop();
    }
    const [cold, ...warm] = samples;
    const own = (sample: Sample) => sample.toImplementerMs - sample.provisionMs;
    const line = (what: string, sample: Sample | undefined, n: number) =>
      sample
        ? `${what}: label → implementer ${sample.toImplementerMs.toFixed(0)} ms, provisioning ${sample.provisionMs.toFixed(0)} ms, the App's own ${own(sample).toFixed(0)} ms = ${(sample.toImplementerMs / (sample.provisionMs + 1500)).toFixed(2)}× (provisioning + 1.5 s)${n > 1 ? ` (median of ${n})` : ""}`
        : "";
    console.log(line("first story (repository cache cold)", cold, 1));
    const medianSample = {
      toImplementerMs: median(warm.map((s) => s.toImplementerMs)),
      provisionMs: median(warm.map((s) => s.provisionMs)),
      toRunMs: median(warm.map((s) => s.toRunMs)),
    };
    console.log(line("later stories", medianSample, warm.length));
    console.log(`of which label → run started (token, cache, start commit): ${medianSample.toRunMs.toFixed(0)} ms`);
    console.log(
      `the App's own share per later story: ${warm.map((s) => own(s).toFixed(0)).join(", ")} ms; load ${load.toFixed(2)} → ${(loadavg()[0] ?? 0).toFixed(2)}`,
    );
  } finally {
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
