/**
 * Per seat, each real agent CLI launched by the harness against the same CLI run bare in the same bubblewrap view.
 *
 * Subject: a whole story with `harness run` (the compiled CLI) and the preset, the CLI talking
 * to the fake model provider on loopback; from the story's journal and the provider's clock,
 * per seat: launch → first request (the seat's launch, `seat.usage`'s `launchedAt`, → the
 * provider's first request carrying that seat's prompt) and the seat's wall time (launch →
 * `seat.usage`, which the harness journals once the CLI ended and its transcript was split).
 * The launch is where the harness begins launching the agent, sandbox preparation included;
 * what the stage does before it (the verifier's gate, waiting for the baseline) is a step of
 * its own, reported beside the seat. Baseline: the same CLI,
 * the same rendered prompt, run bare under bubblewrap with the seat's view (bench/lib/bare-seat.ts),
 * timed from its spawn. Stories and bare runs alternate (A B B A …); one unmeasured story first.
 * The harness's share of a seat is 1 − bare ÷ harness wall time. Target ≤ 1.1× for both.
 *
 *   npm run bench -- agents [--reps 3] [--cli claude-code,codex]
 */
import { copyFileSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { exec } from "../src/exec/index.js";
import { completingScript, startFakeProvider, type FakeProvider } from "../test/support/fake-provider/index.js";
import { initRepo, makeTempDir, removeTempDirs } from "../test/support/tmp.js";
import { installRealClis, type InstalledClis } from "../test/agents/real-cli-install.js";
import { findFiles, providerAsSeenByStep, removeStoryHomes, runRealStory } from "../test/agents/real-story.js";
import { runBareSeat } from "./lib/bare-seat.js";
import { formatPaired, median, summarisePairs } from "./lib/paired.js";

type Preset = "claude-code" | "codex";
const SEATS = ["implementer", "tester", "verifier", "documenter"] as const;
const SCRIPT = completingScript({ file: "feature.txt", content: "hello" });

/** One seat's timings, in ms: launch → first request, and launch → end. */
interface SeatTiming {
  firstRequestMs: number;
  wallMs: number;
}

interface JournalEvent {
  kind: string;
  stage?: string;
  attempt?: number;
  at: string;
  launchedAt?: string;
  durationMs?: number;
}

/** The first request of `seat` the provider received at or after `since`. */
function firstRequestAt(provider: FakeProvider, seat: string, since: number): number {
  const at = provider.turnsOf(seat).find((request) => request.at >= since)?.at;
  if (at === undefined) throw new Error(`the provider received no request of the ${seat} seat`);
  return at;
}

function credentials(preset: Preset, url: string): { env: Record<string, string>; openaiBaseUrl?: string } {
  return preset === "claude-code"
    ? { env: { ANTHROPIC_API_KEY: "sk-ant-bench-key", ANTHROPIC_BASE_URL: url } }
    : { env: { OPENAI_API_KEY: "sk-bench-key", OPENAI_BASE_URL: `${url}/v1` }, openaiBaseUrl: `${url}/v1` };
}

/** One story through the harness; per seat its timings, and the prompt the harness rendered for it. */
async function harnessStory(
  clis: InstalledClis,
  preset: Preset,
  provider: FakeProvider,
  homes: string[],
): Promise<{ seats: Map<string, SeatTiming & { prompt: string; beforeMs: number; outsideMs: number }>; baselineWaitMs: number; storyMs: number }> {
  const seen = providerAsSeenByStep(provider);
  const since = Date.now();
  const run = await runRealStory(clis, preset, credentials(preset, seen.url).env, seen.netAllow, "grep -qx hello feature.txt");
  homes.push(run.home);
  if (run.exitCode !== 0) throw new Error(`the ${preset} story did not complete (exit ${String(run.exitCode)}):\n${run.stderr.slice(-3000)}`);
  const journal = readFileSync(findFiles(run.runDir, "execution-history.ndjson")[0] ?? "", "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as JournalEvent);
  const timings = new Map<string, SeatTiming & { prompt: string; beforeMs: number; outsideMs: number }>();
  for (const seat of SEATS) {
    const of = (kind: string): JournalEvent => {
      const event = journal.find((entry) => entry.kind === kind && entry.stage === seat && entry.attempt === 1);
      if (event === undefined) throw new Error(`the journal has no ${kind} of the ${seat} seat`);
      return event;
    };
    const usage = of("seat.usage");
    if (usage.launchedAt === undefined) throw new Error(`the ${seat} seat's seat.usage has no launchedAt`);
    // The seat starts where the harness begins launching its agent: after the stage's gate (the verifier's clean clone) and the baseline's answer.
    const launched = Date.parse(usage.launchedAt);
    const prompt = findFiles(run.runDir, "prompt.md").find((path) => path.includes(`/${seat}/`));
    if (prompt === undefined) throw new Error(`no prompt.md of the ${seat} seat in ${run.runDir}`);
    timings.set(seat, {
      firstRequestMs: firstRequestAt(provider, seat, since) - launched,
      wallMs: Date.parse(usage.at) - launched,
      beforeMs: launched - Date.parse(of("stage.started").at),
      // The seat's time outside its sandboxed process (exec's duration): preparing the launch, and the transcript's split after it.
      outsideMs: Date.parse(usage.at) - launched - (usage.durationMs ?? Number.NaN),
      prompt,
    });
  }
  // The baseline runs beside the first seat, after its agent's start; the second stage waits for its answer.
  const ended = journal.find((event) => event.kind === "stage.finished" && event.stage === SEATS[0]);
  const next = journal.find((event) => event.kind === "stage.started" && event.stage === SEATS[1]);
  const baselineWaitMs = ended && next ? Date.parse(next.at) - Date.parse(ended.at) : Number.NaN;
  const storyMs = Date.parse(journal.at(-1)?.at ?? "") - Date.parse(journal[0]?.at ?? "");
  return { seats: timings, baselineWaitMs, storyMs };
}

/** Every seat of a story run bare, with the prompts the harness rendered. */
async function bareStory(clis: InstalledClis, preset: Preset, provider: FakeProvider, prompts: Map<string, string>): Promise<Map<string, SeatTiming>> {
  const dir = makeTempDir("harness-bench-agents-");
  const worktree = join(dir, "worktree");
  await initRepo(worktree, { "README.md": "# demo\n" });
  const provided = credentials(preset, provider.url);
  const timings = new Map<string, SeatTiming>();
  for (const seat of SEATS) {
    const artifactDir = makeTempDir("harness-bench-artifacts-");
    const promptFile = join(dir, `${seat}.md`);
    copyFileSync(prompts.get(seat) ?? "", promptFile);
    const ran = await runBareSeat({
      preset,
      worktree,
      promptFile,
      artifactDir,
      readPaths: [clis.root],
      path: `${clis.bin}:${process.env.PATH ?? ""}`,
      env: provided.env,
      ...(provided.openaiBaseUrl !== undefined ? { openaiBaseUrl: provided.openaiBaseUrl } : {}),
      logPath: join(dir, `${seat}.log`),
    });
    if (ran.exitCode !== 0) throw new Error(`the bare ${preset} ${seat} exited ${String(ran.exitCode)} (see ${join(dir, `${seat}.log`)})`);
    timings.set(seat, { firstRequestMs: firstRequestAt(provider, seat, ran.launchedAt) - ran.launchedAt, wallMs: ran.endedAt - ran.launchedAt });
  }
  return timings;
}

/** The compiled CLI the story runs (`harness run` is what a user runs): built now so it matches the sources. */
async function buildDist(): Promise<void> {
  const built = await exec([process.execPath, resolve("node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
    cwd: process.cwd(),
    captureStdout: true,
    timeoutMs: 300_000,
  });
  if (built.exitCode !== 0) throw new Error(`npm run build failed:\n${built.stdout?.toString() ?? ""}${built.tail}`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { reps: { type: "string", default: "3" }, cli: { type: "string", default: "claude-code,codex" } } });
  const reps = Math.max(1, Number(values.reps));
  const presets = values.cli.split(",").map((name) => name.trim()) as Preset[];
  await buildDist();
  const clis = await installRealClis();
  const provider = await startFakeProvider({ script: SCRIPT });
  const homes: string[] = [];
  const [load1, load5, load15] = loadavg();
  console.log(`load average at start: ${load1?.toFixed(2)} ${load5?.toFixed(2)} ${load15?.toFixed(2)} (1, 5, 15 min)`);
  try {
    for (const preset of presets) {
      const warm = (await harnessStory(clis, preset, provider, homes)).seats;
      const prompts = new Map([...warm].map(([seat, timing]) => [seat, timing.prompt]));
      const harness: Map<string, SeatTiming & { beforeMs: number; outsideMs: number }>[] = [];
      const stories: { baselineWaitMs: number; storyMs: number }[] = [];
      const story = async (): Promise<void> => {
        const run = await harnessStory(clis, preset, provider, homes);
        harness.push(run.seats);
        stories.push(run);
      };
      const bare: Map<string, SeatTiming>[] = [];
      const before = loadavg()[0] ?? 0;
      for (let rep = 0; rep < reps; rep += 1) {
        if (rep % 2 === 0) {
          await story();
          bare.push(await bareStory(clis, preset, provider, prompts));
        } else {
          bare.push(await bareStory(clis, preset, provider, prompts));
          await story();
        }
      }
      const load = { before, after: loadavg()[0] ?? 0 };
      const pick = (runs: Map<string, SeatTiming>[], seat: string, metric: keyof SeatTiming): number[] =>
        runs.map((run) => run.get(seat)?.[metric] ?? Number.NaN);
      for (const seat of SEATS) {
        const first = summarisePairs(pick(harness, seat, "firstRequestMs"), pick(bare, seat, "firstRequestMs"), load);
        const wall = summarisePairs(pick(harness, seat, "wallMs"), pick(bare, seat, "wallMs"), load);
        const share = median(wall.subjectMs.map((value, index) => 1 - (wall.baselineMs[index] as number) / value));
        console.log(formatPaired(`${preset} ${seat}: launch → first request, harness ÷ bare`, first, { max: 1.1 }));
        console.log(formatPaired(`${preset} ${seat}: seat wall time, harness ÷ bare`, wall, { max: 1.1 }));
        console.log(`${preset} ${seat}: the harness's share of the seat's wall time: ${(share * 100).toFixed(1)} %`);
        const before = median(harness.map((run) => run.get(seat)?.beforeMs ?? Number.NaN));
        console.log(`${preset} ${seat}: the stage before its seat's launch (its gate, the baseline's answer): ${before.toFixed(0)} ms (median)`);
        const outside = median(harness.map((run) => run.get(seat)?.outsideMs ?? Number.NaN));
        console.log(
          `${preset} ${seat}: the seat's time outside its sandboxed process (launch preparation, transcript split): ${outside.toFixed(0)} ms (median)`,
        );
      }
      const sum = (runs: Map<string, SeatTiming>[], metric: keyof SeatTiming): number[] =>
        runs.map((run) => SEATS.reduce((total, seat) => total + (run.get(seat)?.[metric] ?? Number.NaN), 0));
      console.log(
        formatPaired(`${preset} all seats: launch → first request`, summarisePairs(sum(harness, "firstRequestMs"), sum(bare, "firstRequestMs"), load), {
          max: 1.1,
        }),
      );
      console.log(formatPaired(`${preset} all seats: seat wall time`, summarisePairs(sum(harness, "wallMs"), sum(bare, "wallMs"), load), { max: 1.1 }));
      const waited = median(stories.map((run) => run.baselineWaitMs));
      const whole = median(stories.map((run) => run.storyMs));
      console.log(
        `${preset} story: ${whole.toFixed(0)} ms from its first event to its last, ${waited.toFixed(0)} ms of it between the first seat's end and the second's start (the baseline's answer) (medians)`,
      );
    }
  } finally {
    const [end1, end5, end15] = loadavg();
    console.log(`load average at end: ${end1?.toFixed(2)} ${end5?.toFixed(2)} ${end15?.toFixed(2)} (1, 5, 15 min)`);
    await provider.stop();
    removeStoryHomes(homes);
    removeTempDirs();
  }
}

await main();
