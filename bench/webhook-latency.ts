/**
 * Webhook answer latency: signed `issues.labeled` bursts at several rates, story-harness ÷ a bare Probot app, interleaved.
 *
 * Two servers run side by side as child processes of this file (`--serve bare|harness`) for
 * the whole run: (a) a bare Probot app whose handler does nothing, (b) story-harness's App with
 * its webhook guard on (the same WEBHOOK_SECRET as the bare app: both check the signature of
 * every delivery), its trigger handler and the durable embedded queue; the runner is not
 * started, so only the webhook path is measured. Both log JSON lines at info, as with
 * LOG_FORMAT=json: the bare app written synchronously as Probot's logger does, the App through
 * its own asynchronous one as `harness serve` does. The App runs the compiled code in dist/, as
 * `npm start` does. The fake GitHub lives in this process; the load generator runs in a process
 * of its own for each burst (bench/lib/open-loop.ts), so its CPU is charged to neither server.
 *
 * For each rate, each repetition sends one burst of `--count` deliveries to each server, in
 * the A B B A order of bench/lib/paired.ts, and takes the p99 of the answers (and p50, and the
 * deliveries that failed or took over 10 s: GitHub's own timeout). Every delivery labels an
 * issue of its own, so each one is a real enqueue for the App. The App listens as `harness
 * serve` does (its listen backlog, HARNESS_LISTEN_BACKLOG's default; the bare app with node's
 * 511) and sheds past HARNESS_MAX_INFLIGHT: its 503 answers are counted apart ("shed"), not as
 * failed; p50 and p99 are of the 200 answers. The top rate is over the App's capacity on a
 * 2-core machine: shedding is what keeps its answers inside GitHub's 10 s there.
 *
 * With `--alloc`, each burst also counts what each server allocated on its JavaScript heap per
 * delivery, what its scavenges promoted to the old generation, its time in GC, and what it
 * retained after a full collection (bench/lib/alloc-meter.ts): counts, not times, so the
 * App ÷ bare ratio holds on a loaded machine. With BENCH_PERF=1, each burst also counts each
 * server's system calls (by kind) and context switches per delivery with `perf stat`
 * (bench/lib/perf-counts.ts). BENCH_HEAP_PROF=<dir> (with `--alloc`) writes each
 * server's sampled allocations by function there (`<kind>.heapprofile`, collected objects included).
 *
 *   npm run bench -- webhook-latency [--rates 300,800,1200,2000] [--count 2000] [--reps 4] [--alloc]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { pino } from "pino";
import { Probot, Server } from "probot";
import { exec, succeeded } from "../src/exec/index.js";
import type { EmbeddedQueue } from "../src/queue/index.js";
import { issuesLabeledPayload, signedDelivery, startFakeGitHub, type FakeGitHub } from "../test/support/fake-github/index.js";
import { freePort } from "../test/support/net.js";
import { formatPaired, measurePaired, median } from "./lib/paired.js";
import { meterAllocations, readAllocWindow, type AllocWindow } from "./lib/alloc-meter.js";
import { PERF_EVENTS, perfCounts, type PerfCounts } from "./lib/perf-counts.js";

interface ServerConfig {
  appId: number;
  privateKey: string;
  secret: string;
  baseUrl: string;
  port: number;
  home: string;
}
type Kind = "bare" | "harness";

/**
 * The App's modules as `npm start` runs them: the compiled JavaScript in dist/ (built at the
 * start of the run), not the TypeScript sources through the bench's loader, whose transpiled
 * output does work per call that the shipped code does not.
 */
async function compiledApp(): Promise<{
  harnessApp: typeof import("../src/app.js").harnessApp;
  HarnessOctokit: typeof import("../src/cli/serve.js").HarnessOctokit;
  asyncJsonLog: typeof import("../src/cli/json-log.js").asyncJsonLog;
  EmbeddedQueue: typeof import("../src/queue/index.js").EmbeddedQueue;
  backlog: typeof import("../src/cli/listen-backlog.js");
}> {
  const load = <T>(path: string): Promise<T> => import(pathToFileURL(resolve("dist", path)).href) as Promise<T>;
  const [app, serveModule, jsonLog, queue, backlog] = await Promise.all([
    load<typeof import("../src/app.js")>("app.js"),
    load<typeof import("../src/cli/serve.js")>("cli/serve.js"),
    load<typeof import("../src/cli/json-log.js")>("cli/json-log.js"),
    load<typeof import("../src/queue/index.js")>("queue/index.js"),
    load<typeof import("../src/cli/listen-backlog.js")>("cli/listen-backlog.js"),
  ]);
  return {
    harnessApp: app.harnessApp,
    HarnessOctokit: serveModule.HarnessOctokit,
    asyncJsonLog: jsonLog.asyncJsonLog,
    EmbeddedQueue: queue.EmbeddedQueue,
    backlog,
  };
}

/** Child mode: one server, configured from a JSON file (credentials never travel in the environment). */
async function serve(kind: string, configPath: string): Promise<void> {
  const config = JSON.parse(readFileSync(configPath, "utf8")) as ServerConfig;
  const heapProfile = process.env.BENCH_HEAP_PROF ? join(process.env.BENCH_HEAP_PROF, `${kind}.heapprofile`) : undefined;
  if (process.env.BENCH_ALLOC) await meterAllocations(process.env.BENCH_ALLOC, heapProfile);
  const { harnessApp, HarnessOctokit, asyncJsonLog, EmbeddedQueue, backlog } = await compiledApp();
  // The App logs as `harness serve` does with LOG_FORMAT=json (asynchronous writes); the bare app
  // as Probot's own logger does with LOG_FORMAT=json (the same JSON lines, written synchronously).
  // Without a logger of its own, the bare Server would pretty-print every request line.
  const log = kind === "bare" ? pino({ level: "info", name: "probot", messageKey: "msg" }, pino.destination(1)) : asyncJsonLog(process.env);
  const ProbotWithDefaults = Probot.defaults({
    appId: config.appId,
    privateKey: config.privateKey,
    secret: config.secret,
    baseUrl: config.baseUrl,
    ...(kind === "bare" ? {} : { Octokit: HarnessOctokit }),
    ...(log ? { log } : {}),
  });
  const server = new Server({ Probot: ProbotWithDefaults, port: config.port, host: "127.0.0.1", ...(log ? { log } : {}) });
  if (kind === "bare") {
    await server.load((app) => app.on("issues.labeled", async () => undefined));
  } else {
    // As `harness serve` opens it (src/queue/open.ts): the enqueue appends to the write-ahead log.
    const queue = await EmbeddedQueue.open({ dir: join(config.home, "queue"), writeAheadLog: true });
    if (process.env.BENCH_TRACE) traceEnqueue(queue, process.env.BENCH_TRACE);
    // The secret as `harness serve` passes it: the guard checks size, arrival and signature at the door.
    // The load comes from one loopback address, where GitHub's deliveries come from many: the
    // per-client limit is the global one here, so the burst meets the door GitHub would.
    const settings = {
      harnessHome: config.home,
      concurrency: 1,
      agentEnvAllow: [],
      labelName: "story",
      githubThrottle: true,
      webhookSecret: config.secret,
      maxInflightPerClient: 256,
    };
    await server.load(harnessApp({ queue, settings, runJobs: false }));
  }
  // The App's server listens as `harness serve`'s does: with its backlog (default, cut to somaxconn).
  if (kind === "bare") await server.start();
  else await backlog.listeningWithBacklog(backlog.readListenBacklog(process.env, backlog.kernelSomaxconn()).backlog, () => server.start());
  // Stopped by the parent: exit normally, so a CPU profile (BENCH_PROF) is written (a heap profile's writer exits itself).
  if (!heapProfile) process.once("SIGTERM", () => process.exit(0));
  process.stdout.write("ready\n");
}

/**
 * BENCH_TRACE=<file>: where the App's time goes. Records each enqueue's duration and the
 * event loop's delay; written when the server stops, so a slow answer can be told apart as
 * waiting on the queue's writes or as the loop being busy (CPU, GC).
 */
function traceEnqueue(queue: EmbeddedQueue, file: string): void {
  const durations: number[] = [];
  const enqueue = queue.enqueue.bind(queue);
  queue.enqueue = async (job) => {
    const started = performance.now();
    try {
      return await enqueue(job);
    } finally {
      durations.push(performance.now() - started);
    }
  };
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  process.once("exit", () => {
    const sorted = durations.sort((a, b) => a - b);
    const ms = (ns: number): number => ns / 1e6;
    writeFileSync(
      file,
      JSON.stringify(
        {
          enqueues: sorted.length,
          enqueueMs: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) },
          loopDelayMs: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) },
        },
        null,
        2,
      ),
    );
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * CPU time (user + system) a server's process has used, in ms, from /proc (Linux); with
 * `mainThread`, its main thread's alone (the event loop: what delays answers), not its
 * thread pool's and workers'.
 */
function cpuMs(pid: number | undefined, mainThread = false): number {
  if (pid === undefined) return Number.NaN;
  const fields =
    readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, "utf8")
      .split(") ")[1]
      ?.split(" ") ?? [];
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS_PER_S;
}
/** USER_HZ: 100 on every Linux this runs on. */
const CLOCK_TICKS_PER_S = 100;

/** One burst's answers, and the server's CPU per delivery during it (robust to a loaded machine, unlike latency). */
interface Burst {
  p50: number;
  p99: number;
  failed: number;
  failedStatus: number[];
  shed: number;
  cpuMsPerDelivery: number;
  mainCpuMsPerDelivery: number;
  alloc?: BurstAlloc;
  perf?: PerfCounts;
}

/** With `--alloc`: one burst's heap figures, per delivery (retained: per 1,000 deliveries). */
interface BurstAlloc {
  allocatedKb: number;
  promotedKb: number;
  gcMs: number;
  scavenges: number;
  markCompacts: number;
  retainedKbPer1000: number;
}

/** Issue numbers handed out so far: every delivery of the run labels an issue of its own. */
let issueCounter = 0;

/** One running server and the deliveries prepared for it. */
class Target {
  private template: Record<string, unknown> | undefined;
  private readonly stop = new AbortController();
  private child: ReturnType<typeof exec> | undefined;
  private pid: number | undefined;
  private allocSeq = 0;
  readonly url: string;

  constructor(
    readonly kind: Kind,
    private readonly port: number,
    private readonly root: string,
    private readonly fake: FakeGitHub,
    private readonly alloc = false,
  ) {
    this.url = `http://127.0.0.1:${port}/api/github/webhooks`;
  }

  /**
   * The next `n` deliveries, signed, in a file for the load generator (made before the clock
   * starts). One real `issues.labeled` payload from the fake is the template; each delivery
   * names a new issue number and id, so each is a new story (the fake's own issue list would
   * make preparing a long run quadratic).
   */
  private prepare(n: number): string {
    if (!this.template) {
      const issue = this.fake.createIssue("bench", "widgets", { title: `Story for ${this.kind}`, body: "", user: "bench" });
      this.template = issuesLabeledPayload(this.fake, { owner: "bench", name: "widgets", number: issue.number, label: "story", sender: "bench" }) as Record<
        string,
        unknown
      >;
    }
    const template = this.template;
    const lines: string[] = [];
    for (let index = 0; index < n; index += 1) {
      const number = 100_000 + (issueCounter += 1);
      const payload = { ...template, issue: { ...(template.issue as Record<string, unknown>), number, id: 900_000_000 + number, node_id: `I_bench${number}` } };
      const delivery = signedDelivery("issues", payload, this.fake.webhookSecret);
      lines.push(JSON.stringify({ url: this.url, headers: delivery.headers, body: delivery.body }));
    }
    const path = join(this.root, `${this.kind}-requests.jsonl`);
    writeFileSync(path, `${lines.join("\n")}\n`);
    return path;
  }

  async start(): Promise<void> {
    const fake = this.fake;
    const configPath = join(this.root, `${this.kind}.json`);
    const config: ServerConfig = {
      appId: fake.appId,
      privateKey: fake.privateKey,
      secret: fake.webhookSecret,
      baseUrl: fake.apiUrl,
      port: this.port,
      home: join(this.root, this.kind),
    };
    writeFileSync(configPath, JSON.stringify(config));
    const logPath = join(this.root, `${this.kind}.log`);
    // BENCH_PROF=<dir>: a CPU profile of each server (<dir>/bare, <dir>/harness), written when it stops.
    const profile = process.env.BENCH_PROF ? ["--cpu-prof", `--cpu-prof-dir=${join(process.env.BENCH_PROF, this.kind)}`] : [];
    // BENCH_APP_FLAGS="<node flags>": for the App's server only (e.g. "--trace-gc", or a heap setting to try).
    const flags = [
      ...(this.kind === "harness" && process.env.BENCH_APP_FLAGS ? process.env.BENCH_APP_FLAGS.split(" ") : []),
      ...(this.alloc ? ["--expose-gc"] : []),
    ];
    const meter = this.alloc
      ? { BENCH_ALLOC: this.allocFile, ...(process.env.BENCH_HEAP_PROF ? { BENCH_HEAP_PROF: resolve(process.env.BENCH_HEAP_PROF) } : {}) }
      : {};
    this.child = exec(
      [process.execPath, ...flags, ...profile, "--import", "tsx", resolve("bench/webhook-latency.ts"), "--serve", this.kind, "--config", configPath],
      {
        cwd: process.cwd(),
        signal: this.stop.signal,
        logPath,
        onSpawn: (pid) => (this.pid = pid),
        env: {
          set: {
            LOG_FORMAT: "json",
            LOG_LEVEL: "info",
            NODE_ENV: "production",
            ...(process.env.BENCH_TRACE && this.kind === "harness" ? { BENCH_TRACE: process.env.BENCH_TRACE } : {}),
            ...meter,
          },
        },
      },
    );
    const deadline = Date.now() + 60_000;
    while (
      !(await fetch(`http://127.0.0.1:${this.port}/ping`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (Date.now() > deadline) throw new Error(`${this.kind} server did not start:\n${readFileSync(logPath, "utf8")}`);
      await new Promise((wake) => setTimeout(wake, 100));
    }
  }

  private get allocFile(): string {
    return join(this.root, `${this.kind}-alloc.json`);
  }

  /** Ends the server's allocation window (see bench/lib/alloc-meter.ts). */
  private async allocWindow(): Promise<AllocWindow> {
    if (this.pid === undefined) throw new Error(`${this.kind} server has no pid`);
    const window = await readAllocWindow(this.pid, this.allocFile, this.allocSeq);
    this.allocSeq = window.seq;
    return window;
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.child;
  }

  /** `count` deliveries at `rate` per second from the load generator's own process (bench/lib/open-loop.ts). */
  async burst(count: number, rate: number): Promise<Burst> {
    const input = this.prepare(count);
    const output = join(this.root, `${this.kind}-result.json`);
    const before = this.alloc ? await this.allocWindow() : undefined;
    const cpuBefore = cpuMs(this.pid);
    const mainBefore = cpuMs(this.pid, true);
    // BENCH_PERF=1: the kernel's counts for this server over the burst (bench/lib/perf-counts.ts); the other server is idle meanwhile.
    const perf = process.env.BENCH_PERF && this.pid !== undefined ? perfCounts(this.pid, count / rate + 0.5) : undefined;
    const generator = await exec([process.execPath, "--import", "tsx", resolve("bench/lib/open-loop.ts"), input, String(rate), output], { cwd: process.cwd() });
    if (!succeeded(generator)) throw new Error(`the load generator failed (exit ${generator.exitCode}): ${generator.tail}`);
    const { ms: results, status } = JSON.parse(readFileSync(output, "utf8")) as { ms: number[]; status: number[] };
    const ok = results.filter((value) => value >= 0).sort((a, b) => a - b);
    const shed = status.filter((code) => code === 503).length;
    // What the failed ones got: a status other than 200 and 503, or 0 (no answer: an error, or over 10 s).
    const failedStatus = results.flatMap((value, index) => (value < 0 && status[index] !== 503 ? [status[index] ?? 0] : []));
    const cpuMsPerDelivery = (cpuMs(this.pid) - cpuBefore) / count;
    const mainCpuMsPerDelivery = (cpuMs(this.pid, true) - mainBefore) / count;
    const counted = perf ? perDelivery(await perf, count) : undefined;
    let alloc: BurstAlloc | undefined;
    if (before) {
      const after = await this.allocWindow();
      alloc = {
        allocatedKb: after.allocatedBytes / 1024 / count,
        promotedKb: after.promotedBytes / 1024 / count,
        gcMs: after.gcMs / count,
        scavenges: after.scavenges,
        markCompacts: after.markCompacts,
        retainedKbPer1000: ((after.liveBytes - before.liveBytes) / 1024 / count) * 1000,
      };
    }
    return {
      p50: percentile(ok, 50),
      p99: percentile(ok, 99),
      failed: results.length - ok.length - shed,
      failedStatus,
      shed,
      cpuMsPerDelivery,
      mainCpuMsPerDelivery,
      ...(alloc ? { alloc } : {}),
      ...(counted ? { perf: counted } : {}),
    };
  }
}

function perDelivery(counts: PerfCounts, deliveries: number): PerfCounts {
  return Object.fromEntries(Object.entries(counts).map(([name, value]) => [name, value / deliveries])) as PerfCounts;
}

/** The BENCH_PERF line of a rate: medians over its repetitions, per delivery, App vs bare. */
function formatPerf(rate: number, side: Record<Kind, Burst[]>): string {
  const of = (kind: Kind, name: keyof PerfCounts): number => median(side[kind].map((burst) => burst.perf?.[name] ?? Number.NaN));
  const pairs = (Object.keys(PERF_EVENTS) as Array<keyof PerfCounts>).map(
    (name) => `${name} ${of("harness", name).toFixed(2)} vs ${of("bare", name).toFixed(2)}`,
  );
  return `  ${rate}/s kernel counts per delivery, harness vs bare: ${pairs.join("; ")}`;
}

/** The `--alloc` line of a rate: medians over its repetitions, App ÷ bare. */
function formatAlloc(rate: number, side: Record<Kind, Burst[]>): string {
  const of = (kind: Kind, field: keyof BurstAlloc): number => median(side[kind].map((burst) => burst.alloc?.[field] ?? Number.NaN));
  const pair = (field: keyof BurstAlloc, digits: number): string => {
    const [h, b] = [of("harness", field), of("bare", field)];
    return `${h.toFixed(digits)} vs ${b.toFixed(digits)} (${(h / b).toFixed(2)}×)`;
  };
  return (
    `  ${rate}/s heap per delivery, harness vs bare: allocated KiB ${pair("allocatedKb", 1)}; promoted KiB ${pair("promotedKb", 2)}; GC ms ${pair("gcMs", 3)}; ` +
    `per burst scavenges ${pair("scavenges", 0)}, mark-compacts ${pair("markCompacts", 0)}; retained KiB per 1,000 deliveries ${pair("retainedKbPer1000", 0)}`
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      serve: { type: "string" },
      config: { type: "string" },
      count: { type: "string", default: "2000" },
      rates: { type: "string", default: "300,800,1200,2000" },
      reps: { type: "string", default: "4" },
      alloc: { type: "boolean", default: false },
    },
  });
  if (values.serve && values.config) return serve(values.serve, values.config);
  const count = Number(values.count);
  const rates = values.rates.split(",").map(Number);
  const reps = Number(values.reps);
  if (!Number.isInteger(count) || count < 1 || rates.some((rate) => !(rate > 0)) || !Number.isInteger(reps) || reps < 1)
    throw new Error("--count, --reps: positive integers; --rates: positive numbers, comma-separated");
  // The App's server runs the compiled code (see compiledApp): bring dist/ up to date with src/ first.
  const build = await exec([process.execPath, resolve("node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: process.cwd() });
  if (!succeeded(build)) throw new Error(`building dist/ failed: ${build.tail}`);
  const root = mkdtempSync(join(tmpdir(), "harness-bench-webhook-"));
  const fake = await startFakeGitHub();
  const targets: Target[] = [];
  try {
    await fake.addRepository({ owner: "bench", name: "widgets", files: { "README.md": "# widgets\n" } });
    for (const kind of ["bare", "harness"] as const) {
      const target = new Target(kind, await freePort(), root, fake, values.alloc);
      targets.push(target);
      await target.start();
      await target.burst(200, 100); // installation token, validators, JIT
    }
    const [bare, harness] = targets as [Target, Target];
    console.log(`${count} signed issues.labeled deliveries per burst, ${reps} paired repetitions per rate (A B B A …), both servers up for the whole run`);
    for (const rate of rates) {
      const side: Record<Kind, Burst[]> = { bare: [], harness: [] };
      const run =
        (target: Target) =>
        async (rep: number): Promise<number> => {
          const burst = await target.burst(count, rate);
          if (rep >= 0) side[target.kind].push(burst);
          return burst.p99;
        };
      const paired = await measurePaired(run(harness), run(bare), reps);
      const failed = (kind: Kind): string => {
        const count = side[kind].reduce((sum, burst) => sum + burst.failed, 0);
        const statuses = side[kind].flatMap((burst) => burst.failedStatus);
        return count === 0
          ? "0"
          : `${count} (status ${[...new Set(statuses)].map((code) => `${code}×${statuses.filter((other) => other === code).length}`).join(", ")})`;
      };
      const shed = (kind: Kind): number => side[kind].reduce((sum, burst) => sum + burst.shed, 0);
      const p50s = (kind: Kind): number => median(side[kind].map((burst) => burst.p50));
      const cpu = (kind: Kind): number => median(side[kind].map((burst) => burst.cpuMsPerDelivery));
      const main = (kind: Kind): number => median(side[kind].map((burst) => burst.mainCpuMsPerDelivery));
      console.log(formatPaired(`${rate}/s p99 harness ÷ bare`, paired));
      console.log(
        `  ${rate}/s: harness p99 ${paired.medianSubjectMs.toFixed(1)} ms (${side.harness.map((b) => b.p99.toFixed(0)).join(", ")}), ` +
          `bare p99 ${paired.medianBaselineMs.toFixed(1)} ms (${side.bare.map((b) => b.p99.toFixed(0)).join(", ")}); ` +
          `p50 ${p50s("harness").toFixed(1)} vs ${p50s("bare").toFixed(1)} ms; failed or over 10 s: harness ${failed("harness")}, bare ${failed("bare")} of ${reps * count}; shed (503): harness ${shed("harness")}, bare ${shed("bare")}; ` +
          `CPU per delivery ${cpu("harness").toFixed(2)} vs ${cpu("bare").toFixed(2)} ms (${(cpu("harness") / cpu("bare")).toFixed(2)}×), ` +
          `of it on the main thread ${main("harness").toFixed(2)} vs ${main("bare").toFixed(2)} ms (${(main("harness") / main("bare")).toFixed(2)}×)`,
      );
      if (values.alloc) console.log(formatAlloc(rate, side));
      if (process.env.BENCH_PERF) console.log(formatPerf(rate, side));
    }
  } finally {
    for (const target of targets) await target.close();
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
