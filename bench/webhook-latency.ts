/**
 * Webhook answer latency: 2,000 signed `issues.labeled` deliveries sent at 200 per second to
 * (a) a bare Probot app whose handler does nothing and (b) story-harness's App (its trigger
 * handler, the durable queue; the runner is not started, so only the webhook path is
 * measured), plus (c) `enqueue`: a handler that only enqueues, to separate the queue's cost. Both servers run as child processes of this file (`--serve bare|harness`), the
 * fake GitHub and the load generator in this process. Prints p50/p99 of each and their ratio.
 *
 *   node --import tsx bench/webhook-latency.ts [--count 2000] [--rate 200] [--rounds 3]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Probot, Server } from "probot";
import { harnessApp } from "../src/app.js";
import { HarnessOctokit } from "../src/cli/serve.js";
import { exec } from "../src/exec/index.js";
import { EmbeddedQueue, storyKey } from "../src/queue/index.js";
import { issuesLabeledPayload, signedDelivery, startFakeGitHub, type FakeGitHub } from "../test/support/fake-github/index.js";
import { freePort } from "../test/e2e/app-process.js";

interface ServerConfig { appId: number; privateKey: string; secret: string; baseUrl: string; port: number; home: string }

/** Child mode: one server, configured from a JSON file (credentials never travel in the environment). */
async function serve(kind: string, configPath: string): Promise<void> {
  const config = JSON.parse(readFileSync(configPath, "utf8")) as ServerConfig;
  // Probot's default logging (every request at info, as `harness serve` does) for both servers.
  const ProbotWithDefaults = Probot.defaults({
    appId: config.appId, privateKey: config.privateKey, secret: config.secret, baseUrl: config.baseUrl, ...(kind === "bare" ? {} : { Octokit: HarnessOctokit }),
  });
  const server = new Server({ Probot: ProbotWithDefaults, port: config.port, host: "127.0.0.1" });
  if (kind === "bare") {
    await server.load((app) => app.on("issues.labeled", async () => undefined));
  } else if (kind === "enqueue") {
    // The queue alone: the job built from the payload and enqueued, no GitHub lookup.
    const queue = await EmbeddedQueue.open({ dir: join(config.home, "queue") });
    await server.load((app) =>
      app.on("issues.labeled", async (context) => {
        const { issue, repository } = context.payload;
        await queue.enqueue({
          storyKey: storyKey(repository.owner.login, repository.name, issue.number),
          kind: "start",
          installationId: context.payload.installation?.id ?? 0,
          repository: { id: repository.id, owner: repository.owner.login, name: repository.name, cloneUrl: repository.clone_url, defaultBranch: repository.default_branch },
          issue: { number: issue.number, title: issue.title, body: issue.body ?? "" },
          requestedBy: context.payload.sender.login,
          deliveryId: context.id,
          enqueuedAt: new Date().toISOString(),
        });
      }),
    );
  } else {
    const queue = await EmbeddedQueue.open({ dir: join(config.home, "queue") });
    const settings = { harnessHome: config.home, concurrency: 1, agentEnvAllow: [], labelName: "story", githubThrottle: true };
    await server.load(harnessApp({ queue, settings, runJobs: false }));
  }
  await server.start();
  process.stdout.write("ready\n");
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function measure(kind: "bare" | "enqueue" | "harness", fake: FakeGitHub, root: string, count: number, rate: number): Promise<{ p50: number; p99: number; errors: number }> {
  const port = await freePort();
  const home = join(root, kind);
  const configPath = join(root, `${kind}.json`);
  writeFileSync(configPath, JSON.stringify({ appId: fake.appId, privateKey: fake.privateKey, secret: fake.webhookSecret, baseUrl: fake.apiUrl, port, home }));
  const abort = new AbortController();
  const child = exec([process.execPath, "--import", "tsx", resolve("bench/webhook-latency.ts"), "--serve", kind, "--config", configPath], {
    cwd: process.cwd(),
    signal: abort.signal,
    logPath: join(root, `${kind}.log`),
  });
  const url = `http://127.0.0.1:${port}/api/github/webhooks`;
  const deadline = Date.now() + 30_000;
  while (!(await fetch(`http://127.0.0.1:${port}/ping`).then((r) => r.ok, () => false))) {
    if (Date.now() > deadline) throw new Error(`${kind} server did not start:\n${readFileSync(join(root, `${kind}.log`), "utf8")}`);
    await new Promise((wake) => setTimeout(wake, 100));
  }
  // Every delivery labels its own issue, so each one is a real enqueue for the App.
  const deliveries: ReturnType<typeof signedDelivery>[] = [];
  for (let index = 0; index < count + 50; index += 1) {
    const issue = fake.createIssue("bench", "widgets", { title: `Story ${index}`, body: "", user: "bench" });
    deliveries.push(signedDelivery("issues", issuesLabeledPayload(fake, { owner: "bench", name: "widgets", number: issue.number, label: "story", sender: "bench" }), fake.webhookSecret));
  }
  const send = async (index: number): Promise<number> => {
    const delivery = deliveries[index];
    if (!delivery) return NaN;
    const started = performance.now();
    const response = await fetch(url, { method: "POST", headers: delivery.headers, body: delivery.body });
    await response.text();
    return response.status === 200 ? performance.now() - started : -1;
  };
  for (let index = 0; index < 50; index += 1) await send(index); // warm-up: token, validators, JIT
  const interval = 1000 / rate;
  const start = performance.now();
  const pending: Promise<number>[] = [];
  for (let index = 0; index < count; index += 1) {
    const due = start + index * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((wake) => setTimeout(wake, wait));
    pending.push(send(50 + index));
  }
  const results = await Promise.all(pending);
  abort.abort();
  await child;
  const ok = results.filter((value) => value >= 0).sort((a, b) => a - b);
  return { p50: percentile(ok, 50), p99: percentile(ok, 99), errors: results.length - ok.length };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { serve: { type: "string" }, config: { type: "string" }, count: { type: "string", default: "2000" }, rate: { type: "string", default: "200" }, rounds: { type: "string", default: "3" } },
  });
  if (values.serve && values.config) return serve(values.serve, values.config);
  const count = Number(values.count);
  const rate = Number(values.rate);
  const rounds = Number(values.rounds);
  const root = mkdtempSync(join(tmpdir(), "harness-bench-webhook-"));
  const fake = await startFakeGitHub();
  const line = (name: string, r: { p50: number; p99: number; errors: number }): string => `  ${name.padEnd(8)} p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  errors ${r.errors}`;
  try {
    await fake.addRepository({ owner: "bench", name: "widgets", files: { "README.md": "# widgets\n" } });
    console.log(`${count} signed issues.labeled deliveries at ${rate}/s, ${rounds} rounds (the order of the servers rotates each round)`);
    const ratios: Record<"enqueue" | "harness", { p50: number[]; p99: number[] }> = { enqueue: { p50: [], p99: [] }, harness: { p50: [], p99: [] } };
    const p99s: Record<string, number[]> = { bare: [], enqueue: [], harness: [] };
    const kinds = ["bare", "enqueue", "harness"] as const;
    for (let round = 0; round < rounds; round += 1) {
      const order = kinds.map((_, index) => kinds[(index + round) % kinds.length]!);
      const results = new Map<string, Awaited<ReturnType<typeof measure>>>();
      for (const kind of order) results.set(kind, await measure(kind, fake, root, count, rate));
      const bare = results.get("bare")!;
      console.log(`round ${round + 1} (${order.join(", ")})`);
      for (const kind of kinds) {
        const result = results.get(kind)!;
        console.log(line(kind, result));
        p99s[kind]!.push(result.p99);
        if (kind !== "bare") {
          ratios[kind].p50.push(result.p50 / bare.p50);
          ratios[kind].p99.push(result.p99 / bare.p99);
        }
      }
    }
    console.log(`median p99: bare ${median(p99s.bare!).toFixed(2)} ms, enqueue ${median(p99s.enqueue!).toFixed(2)} ms, harness ${median(p99s.harness!).toFixed(2)} ms`);
    for (const kind of ["enqueue", "harness"] as const) {
      const r = ratios[kind];
      console.log(`ratio ${kind}/bare (median of rounds)  p50 ${median(r.p50).toFixed(2)}x  p99 ${median(r.p99).toFixed(2)}x   (rounds: p99 ${r.p99.map((x) => x.toFixed(2)).join(", ")})`);
    }
  } finally {
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
