/**
 * The fake GitHub's own costs, each against a baseline measured in the same run:
 *   startup  — startFakeGitHub() + close() (RSA key pair, temp dir, listen) against a bare
 *              node:http server's listen + close;
 *   cold     — the first validated request of the process (loads GitHub's OpenAPI description
 *              and compiles one validator) against a warm validated request;
 *   request  — a validated, authenticated check-run update against a GET to a bare node:http
 *              server answering `{}` (both over loopback with fetch);
 *   clone    — `git clone` over the fake's smart HTTP (git http-backend through src/exec)
 *              against `git clone --no-local` of the same bare repository from disk.
 * Figures are medians, reported as ratios (absolute medians alongside for orientation).
 *
 * Run: node --import tsx bench/fake-github.ts [--reps 200]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { git } from "../src/workspace/index.js";
import { startFakeGitHub } from "../test/support/fake-github/index.js";

const { values } = parseArgs({ options: { reps: { type: "string", default: "200" } } });
const REPS = Number(values.reps);

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

async function samples(count: number, work: (index: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let index = 0; index < count; index += 1) out.push(await timed(() => work(index)));
  return out;
}

function line(name: string, subject: number, baseline: number): void {
  console.log(`${name.padEnd(9)} ratio ${(subject / baseline).toFixed(1)}×  (fake ${subject.toFixed(2)} ms, baseline ${baseline.toFixed(2)} ms)`);
}

async function bareServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const work = await mkdtemp(join(tmpdir(), "bench-fake-github-"));
try {
  const startup = median(await samples(7, async () => (await startFakeGitHub()).close()));
  const bareStartup = median(await samples(7, async () => (await bareServer()).close()));

  const gh = await startFakeGitHub();
  const files: Record<string, string> = {};
  for (let index = 0; index < 300; index += 1) files[`src/module-${index}.ts`] = `export const value${index} = ${index};\n`.repeat(40);
  const repo = await gh.addRepository({ owner: "bench", name: "repo", files });
  const sha = (await gh.branchHead("bench", "repo", "main")) ?? "";
  const headers = { authorization: `token ${gh.mintToken()}`, "content-type": "application/json" };
  const api = `${gh.apiUrl}/repos/bench/repo/check-runs`;
  const cold = await timed(() => fetch(api, { method: "POST", headers, body: JSON.stringify({ name: "bench", head_sha: sha }) }).then((r) => r.text()));
  const warmCreate = median(await samples(20, () => fetch(api, { method: "POST", headers, body: JSON.stringify({ name: "bench", head_sha: sha }) }).then((r) => r.text())));
  const runId = gh.state.checkRuns[0]?.id ?? 0;
  const update = (index: number): Promise<string> =>
    fetch(`${api}/${runId}`, { method: "PATCH", headers, body: JSON.stringify({ status: "in_progress", output: { title: "t", summary: `attempt ${index}` } }) }).then((r) => r.text());
  const requestMs = median(await samples(REPS, update));
  const bare = await bareServer();
  const bareMs = median(await samples(REPS, () => fetch(bare.url).then((r) => r.text())));
  await bare.close();

  const env = gh.gitAuthEnv(gh.mintToken());
  const cloneMs = median(await samples(5, (index) => git(["clone", "--quiet", repo.cloneUrl, join(work, `http-${index}`)], { cwd: work, env })));
  const localMs = median(await samples(5, (index) => git(["clone", "--quiet", "--no-local", repo.bareDir, join(work, `local-${index}`)], { cwd: work })));
  if (gh.unexpectedRequests().length > 0) throw new Error("the benchmark made unexpected requests");
  await gh.close();

  console.log(`fake GitHub benchmark (reps ${REPS})`);
  line("startup", startup, bareStartup);
  line("cold", cold, warmCreate);
  line("request", requestMs, bareMs);
  line("clone", cloneMs, localMs);
} finally {
  await rm(work, { recursive: true, force: true });
}
