/**
 * Scale-out on Redis: twenty stories whose scripted agents take 2 seconds each, run by
 * one, two and four `harness worker` processes (HARNESS_CONCURRENCY=1 each) behind one
 * `harness serve`, against the fake GitHub, in the same run (two and four each paired with one,
 * A B B A, bench/lib/paired.ts). Reports
 * throughput (stories per minute, label of the first to end of the last) and its ratio to one
 * worker (targets: >= 1.8 with two, >= 3.2 with four). Then the enqueue-to-start latency of
 * each adapter (an idle worker, one job at a time): p50/p99 of BullMQ against the embedded queue.
 *
 *   npm run bench -- scale-out [--stories 20] [--rounds 1] [--latency-jobs 200] [--breakdown] [--workers N] [--sleep all|implementer]
 *
 * `--sleep all` (the default, the issue's "2-second scripted agents"): each of a story's four
 * agent seats (implementer, tester, verifier, documenter) sleeps 2 s, 8 s of agent time a story.
 * `--sleep implementer`: only the implementer sleeps (2 s), the other seats answer at once; the
 * bench's earlier workload, where a story's own work (git, the sandbox, GitHub's calls: about
 * 0.8 s of CPU) is 30 % of it, not 10 %.
 * `--breakdown` also prints, per configuration, where the stories' time went (their journals):
 * the mean story's longest steps, each worker's busy share and the gaps between its stories,
 * and what fills those gaps (each worker traces its child processes, HTTP requests, Redis
 * commands and CPU: bench/lib/trace-preload.mjs, bench/lib/gap-trace.ts). `--workers N` runs
 * only N workers, `--rounds` times: the per-step figures without the pairs and the latency part.
 * With `--breakdown`, `BENCH_CPU_PROF=<dir>` also has each worker write a V8 CPU profile there.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { EmbeddedQueue, openStoryQueue, type StoryJob, type StoryQueue } from "../src/queue/index.js";
import { storyKey } from "../src/story-key/index.js";
import {
  compileRequestValidators,
  deliverWebhook,
  issuesLabeledPayload,
  REST_ROUTES,
  signedDelivery,
  startFakeGitHub,
  type FakeGitHub,
} from "../test/support/fake-github/index.js";
import { startRedis, type RedisServer } from "../test/support/redis.js";
import { startApp } from "../test/e2e/app-process.js";
import { AGENT_SCRIPT, harnessYml, OWNER, storyEnd } from "../test/e2e/scenario.js";
import { startWorker } from "../test/e2e/worker-process.js";
import { formatPaired, measurePaired, median } from "./lib/paired.js";
import { idleBetween, meanSteps, storyTimelines } from "./lib/story-timeline.js";
import { cpuSince, processCpu, type ProcessCpu } from "./lib/proc-cpu.js";
import { breakDownGaps, breakDownSteps, formatBreakdown, formatSteps, mergeBreakdowns, processesPerStory, readTrace } from "./lib/gap-trace.js";

const { values } = parseArgs({
  options: {
    stories: { type: "string", default: "20" },
    rounds: { type: "string", default: "1" },
    "latency-jobs": { type: "string", default: "200" },
    breakdown: { type: "boolean", default: false },
    workers: { type: "string" },
    sleep: { type: "string", default: "all" },
  },
});
const STORIES = Number(values.stories);
const ROUNDS = Number(values.rounds);
const LATENCY_JOBS = Number(values["latency-jobs"]);
/** `--workers N`: only that configuration, `--rounds` times (per-step figures, no ratios, no latency). */
const ONLY = values.workers === undefined ? undefined : Number(values.workers);
const TRACER = fileURLToPath(new URL("./lib/trace-preload.mjs", import.meta.url));
/** Beside the worker's data directory, not in it: the worker's housekeeping never sees it. */
const traceFile = (home: string): string => `${home}.trace.ndjson`;
if (values.sleep !== "all" && values.sleep !== "implementer") {
  // Told as node's own option errors are (bench/run.ts prints one line and the usage, exit 2).
  throw Object.assign(new TypeError(`Option '--sleep' takes all or implementer, not '${values.sleep ?? ""}'.`), {
    code: "ERR_PARSE_ARGS_INVALID_OPTION_VALUE",
  });
}
/** The scripted agent with its 2-second sleep: before every seat's work, or only the implementer's. */
const SLEEPY_AGENT =
  values.sleep === "all"
    ? AGENT_SCRIPT.replace('case "$HARNESS_STAGE" in', 'sleep 2\ncase "$HARNESS_STAGE" in')
    : AGENT_SCRIPT.replace("    echo hello > feature.txt ;;", "    sleep 2; echo hello > feature.txt ;;");
if (SLEEPY_AGENT === AGENT_SCRIPT) throw new Error("scale-out: the scripted agent changed; its sleep could not be placed");

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** One configuration: serve plus `workers` workers, `STORIES` stories labelled at once; returns seconds to the last end. */
async function throughput(fake: FakeGitHub, redis: RedisServer, workers: number, tag: string): Promise<number> {
  const root = mkdtempSync(join(tmpdir(), `harness-bench-scale-${tag}-`));
  const flush = new Redis(redis.url);
  await flush.flushall();
  flush.disconnect();
  const env = { HARNESS_QUEUE: redis.url };
  const name = `scale-${tag}`;
  await fake.addRepository({
    owner: OWNER,
    name,
    files: { "README.md": "# bench\n", ".harness-test/agent.sh": SLEEPY_AGENT, ".github/harness.yml": harnessYml() },
  });
  const app = await startApp({ fake, home: join(root, "serve"), workDir: root, env });
  const running = [];
  for (let index = 0; index < workers; index += 1) {
    const home = join(root, `w${index}`);
    // With --breakdown each worker traces its processes, requests and Redis commands (bench/lib/trace-preload.mjs).
    const trace: { nodeArgs: string[]; traceEnv: Record<string, string> } = values.breakdown
      ? {
          nodeArgs: ["--import", TRACER, ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [])],
          traceEnv: { HARNESS_TRACE_FILE: traceFile(home) },
        }
      : { nodeArgs: [], traceEnv: {} };
    running.push(
      await startWorker({
        fake,
        name: `w${index}`,
        home,
        workDir: root,
        env: { ...env, HARNESS_CONCURRENCY: "1", ...trace.traceEnv },
        nodeArgs: trace.nodeArgs,
      }),
    );
  }
  try {
    const numbers: number[] = [];
    // CPU by process over the stories (--breakdown): the bench with the fake GitHub, serve, Redis, each worker.
    const pids = { bench: "self" as const, serve: app.pid, redis: redis.pid, ...Object.fromEntries(running.map((each) => [each.name, each.pid])) };
    const cpuBefore = Object.fromEntries(Object.entries(pids).map(([who, pid]) => [who, processCpu(pid)]));
    const started = performance.now();
    for (let index = 0; index < STORIES; index += 1) {
      const issue = fake.createIssue(OWNER, name, { title: `Story ${index}`, body: "Write feature.txt.", user: OWNER });
      const payload = issuesLabeledPayload(fake, { owner: OWNER, name, number: issue.number, label: "story", sender: OWNER });
      await deliverWebhook(app.webhookUrl, signedDelivery("issues", payload, fake.webhookSecret));
      numbers.push(issue.number);
    }
    for (const number of numbers) {
      const { story } = await storyEnd(fake, name, number, 1_200_000);
      if (story.conclusion !== "success")
        throw new Error(`story ${number} ended ${story.conclusion}: ${story.output.title ?? ""}\n${story.output.summary ?? ""}`);
    }
    const took = (performance.now() - started) / 1000;
    const cpu = Object.entries(pids).map(([who, pid]) => [who, cpuSince(cpuBefore[who] as ProcessCpu, processCpu(pid))] as const);
    const homes = running.map((each) => each.home);
    for (const each of running) await each.stop();
    // The traces are complete once the workers have exited (each writes its last records then).
    if (values.breakdown) {
      describeTime(homes, took);
      describeCpu(cpu);
      describeGitRequests(fake, name);
    }
    return took;
  } finally {
    for (const each of running) await each.stop();
    await app.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

/** Where the stories' time went (`--breakdown`): mean story, its longest steps, each worker's busy share and idle gaps. */
function describeTime(homes: string[], tookSeconds: number): void {
  const perWorker = homes.map((home) => storyTimelines(home));
  const all = perWorker.flat();
  const { story, steps } = meanSteps(all);
  const top = steps
    .slice(0, 7)
    .map(([step, ms]) => `${step} ${(ms / 1000).toFixed(2)}`)
    .join(", ");
  console.log(`    mean story ${(story / 1000).toFixed(2)} s in its journal: ${top}`);
  const busy = perWorker.map((timelines) => timelines.reduce((sum, timeline) => sum + timeline.end - timeline.start, 0) / 1000 / tookSeconds);
  const gaps = perWorker.flatMap(idleBetween);
  const firstStarts = perWorker.map((timelines) => timelines[0]?.start ?? Number.NaN);
  const lastEnds = perWorker.map((timelines) => timelines.at(-1)?.end ?? Number.NaN);
  const traces = homes.map((home) => readTrace(traceFile(home)));
  const processes = processesPerStory(traces, all.length);
  console.log(
    `    processes per story ${processes.total.toFixed(1)} (workers' children): ${processes.kinds.map(([kind, count]) => `${kind} ${count.toFixed(2)}`).join(", ")}`,
  );
  const breakdown = mergeBreakdowns(perWorker.map((timelines, index) => breakDownGaps(timelines, traces[index] ?? [])));
  for (const line of formatBreakdown(breakdown)) console.log(`    ${line}`);
  // The head's every operation, however short, counted: GitHub's requests and the git processes before a story's journal starts.
  const head = [...breakdown.ops.head].map(([label, total]) => [label, total.count / Math.max(1, breakdown.gaps)] as const);
  const sum = (match: (label: string) => boolean): string =>
    head
      .filter(([label]) => match(label))
      .reduce((acc, [, count]) => acc + count, 0)
      .toFixed(1);
  console.log(
    `    head per story (after a worker's first): ${sum((label) => label.startsWith("git "))} git processes, ${sum((label) => /^[A-Z]+ \//.test(label))} requests (${head.map(([label, count]) => `${label} ${count.toFixed(1)}`).join(", ")})`,
  );
  // The journal's own longest non-agent steps, by what they ran (first worker: its stories are enough for the per-step picture).
  for (const line of formatSteps(
    breakDownSteps(perWorker[0] ?? [], traces[0] ?? [], ["worktree", "clean_clone", "provision", "story", "gate verifier", "stage tester"]),
  ))
    console.log(`    ${line}`);
  console.log(
    `    stories per worker ${perWorker.map((timelines) => timelines.length).join("/")}; busy ${busy.map((share) => `${(share * 100).toFixed(0)}%`).join("/")}; gap between a worker's stories mean ${(gaps.reduce((a, b) => a + b, 0) / Math.max(1, gaps.length) / 1000).toFixed(2)} s, max ${(Math.max(0, ...gaps) / 1000).toFixed(2)} s; first start spread ${((Math.max(...firstStarts) - Math.min(...firstStarts)) / 1000).toFixed(1)} s, last end spread ${((Math.max(...lastEnds) - Math.min(...lastEnds)) / 1000).toFixed(1)} s`,
  );
}

/** The fake's smart-HTTP requests per story (`--breakdown`): each is a git process of GitHub's (upload-pack, receive-pack) and the client's. */
function describeGitRequests(fake: FakeGitHub, name: string): void {
  const git = fake.state.requests.filter((request) => request.route === "git" && request.path.startsWith(`/${OWNER}/${name}.git/`));
  const count = (service: string, advertisement: boolean): number =>
    git.filter((request) =>
      advertisement ? request.path.endsWith("/info/refs") && request.query.includes(`service=${service}`) : request.path.endsWith(`/${service}`),
    ).length / STORIES;
  const line = ["git-upload-pack", "git-receive-pack"]
    .map((service) => `${service} ${count(service, true).toFixed(2)} info/refs + ${count(service, false).toFixed(2)} POST`)
    .join(", ");
  console.log(`    fake's git requests per story ${(git.length / STORIES).toFixed(2)}: ${line}`);
}

/** CPU seconds per story by process (`--breakdown`): own + waited-for children (git, agents, git's backend in the fake). */
function describeCpu(cpu: ReadonlyArray<readonly [string, ProcessCpu]>): void {
  const per = (ms: number): string => (ms / 1000 / STORIES).toFixed(2);
  const total = cpu.reduce((sum, [, used]) => sum + used.self + used.children, 0);
  const workers = cpu.filter(([who]) => /^w\d+$/.test(who));
  const sum = (list: typeof workers, key: keyof ProcessCpu): number => list.reduce((acc, [, used]) => acc + used[key], 0);
  const others = cpu.filter(([who]) => !/^w\d+$/.test(who)).map(([who, used]) => `${who} ${per(used.self)}+${per(used.children)}`);
  console.log(`    CPU per story ${per(total)} s (own+children): workers ${per(sum(workers, "self"))}+${per(sum(workers, "children"))}, ${others.join(", ")}`);
}

function latencyJob(index: number, tag: string): StoryJob {
  return {
    storyKey: storyKey("bench", tag, index + 1),
    kind: "start",
    installationId: 1,
    repository: { id: 1, owner: "bench", name: tag, cloneUrl: "http://127.0.0.1:1/bench.git", defaultBranch: "main" },
    issue: { number: index + 1, title: "t", body: "b" },
    requestedBy: "bench",
    deliveryId: `${tag}-${index}`,
    enqueuedAt: new Date().toISOString(),
  };
}

/** Enqueue-to-start of `LATENCY_JOBS` jobs, one at a time, an idle worker on `consumer` taking them. */
async function latency(producer: StoryQueue, consumer: StoryQueue, tag: string): Promise<number[]> {
  const samples: number[] = [];
  let wake: (() => void) | undefined;
  consumer.start(async () => {
    wake?.();
  });
  for (let index = 0; index < LATENCY_JOBS; index += 1) {
    const begun = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const at = performance.now();
    await producer.enqueue(latencyJob(index, tag));
    await begun;
    samples.push(performance.now() - at);
  }
  return samples;
}

async function main(): Promise<void> {
  const redis = await startRedis();
  const fake = await startFakeGitHub();
  // The fake's request validation loaded and compiled now, not by the first configuration's stories (its CPU, not theirs).
  compileRequestValidators(REST_ROUTES);
  try {
    // Each worker count paired with one worker, A B B A (bench/lib/paired.ts): time to the last story's end.
    let run = 0;
    const timed = (workers: number) => async (): Promise<number> => {
      const took = await throughput(fake, redis, workers, `r${(run += 1)}w${workers}`);
      console.log(`  ${workers} worker(s): ${STORIES} stories in ${took.toFixed(1)} s (${((STORIES / took) * 60).toFixed(1)} per minute)`);
      return took * 1000;
    };
    if (ONLY !== undefined) {
      for (let index = 0; index < ROUNDS; index += 1) await timed(ONLY)();
      return;
    }
    for (const workers of [2, 4]) {
      const result = await measurePaired(timed(workers), timed(1), ROUNDS, { warmup: false });
      console.log(formatPaired(`time for ${STORIES} stories, ${workers} workers ÷ 1 worker`, result));
      console.log(
        `  throughput ${workers} workers / 1 worker: ×${(1 / result.medianRatio).toFixed(2)} (median of pairs; target >= ${workers === 2 ? "1.8" : "3.2"})`,
      );
    }

    // Enqueue-to-start, BullMQ against the embedded queue, paired per round: the figure is the round's p50 (p99 alongside).
    const p99: { redis: number[]; embedded: number[] } = { redis: [], embedded: [] };
    let round = 0;
    const embeddedP50 = async (): Promise<number> => {
      const dir = mkdtempSync(join(tmpdir(), "harness-bench-latency-"));
      const embedded = await EmbeddedQueue.open({ dir: join(dir, "queue") });
      const samples = await latency(embedded, embedded, `e${(round += 1)}`);
      await embedded.close();
      rmSync(dir, { recursive: true, force: true });
      p99.embedded.push(percentile(samples, 99));
      return percentile(samples, 50);
    };
    const redisP50 = async (): Promise<number> => {
      const prefix = `lat${(round += 1)}`;
      const producer = await openStoryQueue({ kind: "redis", url: redis.url, concurrency: 1, prefix });
      const consumer = await openStoryQueue({ kind: "redis", url: redis.url, concurrency: 1, prefix });
      const samples = await latency(producer, consumer, `r${round}`);
      await consumer.close();
      await producer.close();
      p99.redis.push(percentile(samples, 99));
      return percentile(samples, 50);
    };
    const latencies = await measurePaired(redisP50, embeddedP50, 4, { warmup: false });
    console.log(formatPaired(`enqueue-to-start p50, BullMQ ÷ embedded (${LATENCY_JOBS} jobs a round)`, latencies));
    console.log(
      `  p99 per round: BullMQ ${p99.redis.map((v) => v.toFixed(1)).join(", ")} ms; embedded ${p99.embedded.map((v) => v.toFixed(1)).join(", ")} ms; ratio of medians ${(median(p99.redis) / median(p99.embedded)).toFixed(2)}×`,
    );
  } finally {
    await fake.close();
    await redis.stop();
  }
}

await main();
