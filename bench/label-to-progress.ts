/**
 * Time from a `story` label (the signed webhook POST) to the `harness / story` check run being
 * in progress, with the App as a real server (`harness serve`) against the fake GitHub.
 * Baseline in the same run: a plain `git clone` of the same repository over the fake's smart
 * HTTP — the one piece of work a first story cannot avoid — paired with each story, A B B A
 * (bench/lib/paired.ts).
 *
 *   node --import tsx bench/label-to-progress.ts [--stories 4]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { git } from "../src/workspace/index.js";
import { startFakeGitHub, type FakeGitHub } from "../test/support/fake-github/index.js";
import { startApp, type RunningApp } from "../test/e2e/app-process.js";
import { eventually } from "../test/support/poll.js";
import { addStoryRepo, harnessYml, labelNewIssue, OWNER, reportsDelivered } from "../test/e2e/scenario.js";
import { formatPaired, measurePaired } from "./lib/paired.js";

async function labelToProgress(fake: FakeGitHub, app: RunningApp, repo: string, title: string): Promise<number> {
  const started = performance.now();
  const { number } = await labelNewIssue(fake, app, repo, title);
  const sha = await eventually("story branch", () => fake.branchHead(OWNER, repo, `harness/story-${number}`).then((head) => head ?? undefined), 60_000);
  await eventually(
    "harness / story in progress",
    () =>
      fake.state.checkRuns.some(
        (run) =>
          run.repo === `${OWNER}/${repo}` && run.name === "harness / story" && run.headSha === sha && run.history.some((body) => body.status === "in_progress"),
      )
        ? true
        : undefined,
    60_000,
  );
  return performance.now() - started;
}

async function cloneBaseline(fake: FakeGitHub, root: string, repo: string, index: number): Promise<number> {
  const target = join(root, `clone-${index}`);
  const started = performance.now();
  await git(["clone", "--quiet", `${fake.url}/${OWNER}/${repo}.git`, target], { cwd: root, env: fake.gitAuthEnv(fake.mintToken()) });
  return performance.now() - started;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { stories: { type: "string", default: "4" } } });
  const stories = Math.max(2, Number(values.stories));
  const root = mkdtempSync(join(tmpdir(), "harness-bench-progress-"));
  const home = join(root, "home");
  const fake = await startFakeGitHub();
  try {
    await addStoryRepo(fake, "widgets", harnessYml());
    let clones = 0;
    const clone = (): Promise<number> => cloneBaseline(fake, root, "widgets", (clones += 1));

    const unthrottled = await startApp({ fake, home, workDir: root });
    let story = 0;
    const label = async (): Promise<number> => {
      const ms = await labelToProgress(fake, unthrottled, "widgets", `Story ${(story += 1)}`);
      // Its end reports too (the outbox delivers them after the job): the next sample starts on an idle App.
      await reportsDelivered(home);
      return ms;
    };
    // The first story fills the repository cache: measured alone, against one clone.
    const cold = await label();
    const coldClone = await clone();
    console.log(
      `label → harness / story in progress, first story (cache cold): ${cold.toFixed(0)} ms = ${(cold / coldClone).toFixed(1)}× one clone (${coldClone.toFixed(0)} ms); one sample`,
    );
    // Later stories (cache warm), each paired with a clone, A B B A.
    console.log(
      formatPaired("label → in progress, cache warm ÷ git clone over the fake's smart HTTP", await measurePaired(label, clone, stories - 1, { warmup: false })),
    );
    await unthrottled.stop();
    const throttled = await startApp({ fake, home, workDir: root, env: { HARNESS_GITHUB_THROTTLE: "on" } });
    let throttledStory = 0;
    const throttledLabel = async (): Promise<number> => {
      const ms = await labelToProgress(fake, throttled, "widgets", `Throttled story ${(throttledStory += 1)}`);
      await reportsDelivered(home);
      return ms;
    };
    console.log(formatPaired("the same with GitHub.com's client-side throttling on ÷ clone", await measurePaired(throttledLabel, clone, 1, { warmup: false })));
    await throttled.stop();
  } finally {
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
