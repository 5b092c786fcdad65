/**
 * Time from a `story` label (the signed webhook POST) to the `harness / story` check run being
 * in progress, with the App as a real server (`harness serve`) against the fake GitHub.
 * Baseline in the same run: a plain `git clone` of the same repository over the fake's smart
 * HTTP — the one piece of work a first story cannot avoid.
 *
 *   node --import tsx bench/label-to-progress.ts [--stories 4]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { git } from "../src/workspace/index.js";
import { startFakeGitHub, type FakeGitHub } from "../test/support/fake-github/index.js";
import { eventually, startApp, type RunningApp } from "../test/e2e/app-process.js";
import { addStoryRepo, harnessYml, labelNewIssue, OWNER, queueDrained } from "../test/e2e/scenario.js";

async function labelToProgress(fake: FakeGitHub, app: RunningApp, repo: string, title: string): Promise<number> {
  const started = performance.now();
  const { number } = await labelNewIssue(fake, app, repo, title);
  const sha = await eventually("story branch", () => fake.branchHead(OWNER, repo, `harness/story-${number}`).then((head) => head ?? undefined), 60_000);
  await eventually("harness / story in progress", () =>
    fake.state.checkRuns.some((run) => run.repo === `${OWNER}/${repo}` && run.name === "harness / story" && run.headSha === sha && run.history.some((body) => body.status === "in_progress"))
      ? true
      : undefined, 60_000);
  return performance.now() - started;
}

async function cloneBaseline(fake: FakeGitHub, root: string, repo: string, index: number): Promise<number> {
  const target = join(root, `clone-${index}`);
  const started = performance.now();
  await git(["clone", "--quiet", `${fake.url}/${OWNER}/${repo}.git`, target], { cwd: root, env: fake.gitAuthEnv(fake.mintToken()) });
  return performance.now() - started;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { stories: { type: "string", default: "4" } } });
  const stories = Math.max(2, Number(values.stories));
  const root = mkdtempSync(join(tmpdir(), "harness-bench-progress-"));
  const home = join(root, "home");
  const fake = await startFakeGitHub();
  try {
    await addStoryRepo(fake, "widgets", harnessYml());
    const clones = [];
    for (let index = 0; index < 5; index += 1) clones.push(await cloneBaseline(fake, root, "widgets", index));
    const clone = median(clones);

    const unthrottled = await startApp({ fake, home, workDir: root });
    const times: number[] = [];
    for (let index = 0; index < stories; index += 1) {
      times.push(await labelToProgress(fake, unthrottled, "widgets", `Story ${index}`));
      await queueDrained(home);
    }
    await unthrottled.stop();
    const throttled = await startApp({ fake, home, workDir: root, env: { HARNESS_GITHUB_THROTTLE: "on" } });
    const throttledTime = await labelToProgress(fake, throttled, "widgets", "Throttled story");
    await throttled.stop();

    const [cold, ...warm] = times;
    const warmMedian = median(warm);
    console.log(`baseline git clone over the fake's smart HTTP: median ${clone.toFixed(0)} ms`);
    console.log(`label → harness / story in progress, first story (cache cold): ${(cold ?? NaN).toFixed(0)} ms = ${((cold ?? NaN) / clone).toFixed(1)}x clone`);
    console.log(`label → harness / story in progress, later stories (cache warm), median of ${warm.length}: ${warmMedian.toFixed(0)} ms = ${(warmMedian / clone).toFixed(1)}x clone`);
    console.log(`the same with GitHub.com's client-side throttling on (warm): ${throttledTime.toFixed(0)} ms = ${(throttledTime / clone).toFixed(1)}x clone`);
  } finally {
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
