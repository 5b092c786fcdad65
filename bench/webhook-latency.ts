/**
 * Webhook answer latency: signed `issues.labeled` bursts at several rates, story-harness ÷ a bare Probot app, interleaved.
 *
 * Two servers run side by side as child processes of this file (`--serve bare|harness`) for
 * the whole run: (a) a bare Probot app whose handler does nothing, (b) story-harness's App with
 * its webhook guard on (the same WEBHOOK_SECRET as the bare app: both check the signature of
 * every delivery), its trigger handler and the durable embedded queue; the runner is not
 * started, so only the webhook path is measured. Both log JSON lines at info: the bare app
 * through Probot's logger, the App through its own asynchronous one, as `harness serve` does
 * with LOG_FORMAT=json. The fake GitHub and the load generator live in this process.
 *
 * For each rate, each repetition sends one burst of `--count` deliveries to each server, in
 * the A B B A order of bench/lib/paired.ts, and takes the p99 of the answers (and p50, and the
 * deliveries that failed or took over 10 s: GitHub's own timeout). Every delivery labels an
 * issue of its own, so each one is a real enqueue for the App.
 *
 *   npm run bench -- webhook-latency [--rates 300,800,1200] [--count 2000] [--reps 4]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Probot, Server } from "probot";
import { harnessApp } from "../src/app.js";
import { HarnessOctokit } from "../src/cli/serve.js";
import { asyncJsonLog } from "../src/cli/json-log.js";
import { exec } from "../src/exec/index.js";
import { EmbeddedQueue } from "../src/queue/index.js";
import { issuesLabeledPayload, signedDelivery, startFakeGitHub, type FakeGitHub } from "../test/support/fake-github/index.js";
import { freePort } from "../test/support/net.js";
import { formatPaired, measurePaired, median } from "./lib/paired.js";

interface ServerConfig { appId: number; privateKey: string; secret: string; baseUrl: string; port: number; home: string }
type Kind = "bare" | "harness";

/** GitHub gives up on a delivery after 10 s. */
const GITHUB_TIMEOUT_MS = 10_000;

/** Child mode: one server, configured from a JSON file (credentials never travel in the environment). */
async function serve(kind: string, configPath: string): Promise<void> {
  const config = JSON.parse(readFileSync(configPath, "utf8")) as ServerConfig;
  // The App logs as `harness serve` does with LOG_FORMAT=json (asynchronous writes); the bare app as Probot does.
  const log = kind === "bare" ? undefined : asyncJsonLog(process.env);
  const ProbotWithDefaults = Probot.defaults({
    appId: config.appId, privateKey: config.privateKey, secret: config.secret, baseUrl: config.baseUrl, ...(kind === "bare" ? {} : { Octokit: HarnessOctokit }), ...(log ? { log } : {}),
  });
  const server = new Server({ Probot: ProbotWithDefaults, port: config.port, host: "127.0.0.1", ...(log ? { log } : {}) });
  if (kind === "bare") {
    await server.load((app) => app.on("issues.labeled", async () => undefined));
  } else {
    const queue = await EmbeddedQueue.open({ dir: join(config.home, "queue") });
    // The secret as `harness serve` passes it: the guard checks size, arrival and signature at the door.
    const settings = { harnessHome: config.home, concurrency: 1, agentEnvAllow: [], labelName: "story", githubThrottle: true, webhookSecret: config.secret };
    await server.load(harnessApp({ queue, settings, runJobs: false }));
  }
  await server.start();
  // Stopped by the parent: exit normally, so a CPU profile (BENCH_PROF) is written.
  process.once("SIGTERM", () => process.exit(0));
  process.stdout.write("ready\n");
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

interface Burst { p50: number; p99: number; failed: number }

/** One running server and the deliveries prepared for it. */
class Target {
  private deliveries: ReturnType<typeof signedDelivery>[] = [];
  private next = 0;
  private readonly stop = new AbortController();
  private child: ReturnType<typeof exec> | undefined;
  readonly url: string;

  constructor(readonly kind: Kind, private readonly port: number, private readonly root: string, private readonly fake: FakeGitHub) {
    this.url = `http://127.0.0.1:${port}/api/github/webhooks`;
  }

  /** Deliveries for the next `n` sends, each labelling a new issue (made before the clock starts). */
  private prepare(n: number): void {
    this.deliveries = [];
    this.next = 0;
    for (let index = 0; index < n; index += 1) {
      const issue = this.fake.createIssue("bench", "widgets", { title: `Story for ${this.kind}`, body: "", user: "bench" });
      this.deliveries.push(signedDelivery("issues", issuesLabeledPayload(this.fake, { owner: "bench", name: "widgets", number: issue.number, label: "story", sender: "bench" }), this.fake.webhookSecret));
    }
  }

  async start(): Promise<void> {
    const fake = this.fake;
    const configPath = join(this.root, `${this.kind}.json`);
    const config: ServerConfig = { appId: fake.appId, privateKey: fake.privateKey, secret: fake.webhookSecret, baseUrl: fake.apiUrl, port: this.port, home: join(this.root, this.kind) };
    writeFileSync(configPath, JSON.stringify(config));
    const logPath = join(this.root, `${this.kind}.log`);
    // BENCH_PROF=<dir>: a CPU profile of the App's server, written when it stops.
    const profile = process.env.BENCH_PROF && this.kind === "harness" ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [];
    this.child = exec([process.execPath, ...profile, "--import", "tsx", resolve("bench/webhook-latency.ts"), "--serve", this.kind, "--config", configPath], {
      cwd: process.cwd(), signal: this.stop.signal, logPath, env: { set: { LOG_FORMAT: "json", LOG_LEVEL: "info", NODE_ENV: "production" } },
    });
    const deadline = Date.now() + 60_000;
    while (!(await fetch(`http://127.0.0.1:${this.port}/ping`).then((r) => r.ok, () => false))) {
      if (Date.now() > deadline) throw new Error(`${this.kind} server did not start:\n${readFileSync(logPath, "utf8")}`);
      await new Promise((wake) => setTimeout(wake, 100));
    }
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.child;
  }

  /** Answer time of one delivery in ms, or -1 when it failed or passed GitHub's timeout. */
  private async send(): Promise<number> {
    const delivery = this.deliveries[this.next++];
    if (!delivery) throw new Error(`${this.kind}: out of prepared deliveries`);
    const started = performance.now();
    try {
      const response = await fetch(this.url, { method: "POST", headers: delivery.headers, body: delivery.body, signal: AbortSignal.timeout(GITHUB_TIMEOUT_MS) });
      await response.text();
      return response.status === 200 ? performance.now() - started : -1;
    } catch {
      return -1;
    }
  }

  async warmUp(n: number): Promise<void> {
    this.prepare(n);
    for (let index = 0; index < n; index += 1) await this.send();
  }

  /** `count` deliveries at `rate` per second, on a schedule (an open loop: a slow answer does not slow the sender). */
  async burst(count: number, rate: number): Promise<Burst> {
    this.prepare(count);
    const interval = 1000 / rate;
    const start = performance.now();
    const pending: Promise<number>[] = [];
    for (let index = 0; index < count; index += 1) {
      const wait = start + index * interval - performance.now();
      if (wait > 1) await new Promise((wake) => setTimeout(wake, wait));
      pending.push(this.send());
    }
    const results = await Promise.all(pending);
    const ok = results.filter((value) => value >= 0).sort((a, b) => a - b);
    return { p50: percentile(ok, 50), p99: percentile(ok, 99), failed: results.length - ok.length };
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { serve: { type: "string" }, config: { type: "string" }, count: { type: "string", default: "2000" }, rates: { type: "string", default: "300,800,1200" }, reps: { type: "string", default: "4" } },
  });
  if (values.serve && values.config) return serve(values.serve, values.config);
  const count = Number(values.count);
  const rates = values.rates.split(",").map(Number);
  const reps = Number(values.reps);
  if (!Number.isInteger(count) || count < 1 || rates.some((rate) => !(rate > 0)) || !Number.isInteger(reps) || reps < 1) throw new Error("--count, --reps: positive integers; --rates: positive numbers, comma-separated");
  const root = mkdtempSync(join(tmpdir(), "harness-bench-webhook-"));
  const fake = await startFakeGitHub();
  const targets: Target[] = [];
  try {
    await fake.addRepository({ owner: "bench", name: "widgets", files: { "README.md": "# widgets\n" } });
    for (const kind of ["bare", "harness"] as const) {
      const target = new Target(kind, await freePort(), root, fake);
      targets.push(target);
      await target.start();
      await target.warmUp(50); // installation token, validators, JIT
    }
    const [bare, harness] = targets as [Target, Target];
    console.log(`${count} signed issues.labeled deliveries per burst, ${reps} paired repetitions per rate (A B B A …), both servers up for the whole run`);
    for (const rate of rates) {
      const side: Record<Kind, Burst[]> = { bare: [], harness: [] };
      const run = (target: Target) => async (rep: number): Promise<number> => {
        const burst = await target.burst(count, rate);
        if (rep >= 0) side[target.kind].push(burst);
        return burst.p99;
      };
      const paired = await measurePaired(run(harness), run(bare), reps);
      const failed = (kind: Kind): number => side[kind].reduce((sum, burst) => sum + burst.failed, 0);
      const p50s = (kind: Kind): number => median(side[kind].map((burst) => burst.p50));
      console.log(formatPaired(`${rate}/s p99 harness ÷ bare`, paired));
      console.log(
        `  ${rate}/s: harness p99 ${paired.medianSubjectMs.toFixed(1)} ms (${side.harness.map((b) => b.p99.toFixed(0)).join(", ")}), ` +
          `bare p99 ${paired.medianBaselineMs.toFixed(1)} ms (${side.bare.map((b) => b.p99.toFixed(0)).join(", ")}); ` +
          `p50 ${p50s("harness").toFixed(1)} vs ${p50s("bare").toFixed(1)} ms; failed or over 10 s: harness ${failed("harness")}, bare ${failed("bare")} of ${reps * count}`,
      );
    }
  } finally {
    for (const target of targets) await target.close();
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
