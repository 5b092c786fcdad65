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
 * Figures are medians of paired ratios, subject and baseline interleaved A B B A (bench/lib/paired.ts).
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
import { formatPaired, measurePaired } from "./lib/paired.js";

const { values } = parseArgs({ options: { reps: { type: "string", default: "200" } } });
const REPS = Number(values.reps);

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

async function bareServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const work = await mkdtemp(join(tmpdir(), "bench-fake-github-"));
try {
  console.log(`fake GitHub benchmark (reps ${REPS}); each line subject ÷ baseline, interleaved A B B A`);
  const startup = await measurePaired(
    () => timed(async () => (await startFakeGitHub()).close()),
    () => timed(async () => (await bareServer()).close()),
    7,
  );
  console.log(formatPaired("startup: startFakeGitHub + close ÷ a bare node:http listen + close", startup));

  const gh = await startFakeGitHub();
  const files: Record<string, string> = {};
  for (let index = 0; index < 300; index += 1) files[`src/module-${index}.ts`] = `export const value${index} = ${index};\n`.repeat(40);
  const repo = await gh.addRepository({ owner: "bench", name: "repo", files });
  const sha = (await gh.branchHead("bench", "repo", "main")) ?? "";
  const headers = { authorization: `token ${gh.mintToken()}`, "content-type": "application/json" };
  const api = `${gh.apiUrl}/repos/bench/repo/check-runs`;
  const create = (): Promise<string> => fetch(api, { method: "POST", headers, body: JSON.stringify({ name: "bench", head_sha: sha }) }).then((r) => r.text());
  // The first validated request of the process, once; its baseline, warm requests after it.
  const cold = await timed(create);
  const warm = await measurePaired(
    () => timed(create),
    () => timed(create),
    20,
    { warmup: false },
  );
  console.log(
    `cold: first validated request ${cold.toFixed(1)} ms = ${(cold / warm.medianBaselineMs).toFixed(1)}× a warm one (${warm.medianBaselineMs.toFixed(1)} ms, load ${warm.load.before.toFixed(1)}); one sample, it happens once per process`,
  );
  const runId = gh.state.checkRuns[0]?.id ?? 0;
  let attempt = 0;
  const update = (): Promise<string> =>
    fetch(`${api}/${runId}`, {
      method: "PATCH",
      headers,
      body: JSON.stringify({ status: "in_progress", output: { title: "t", summary: `attempt ${(attempt += 1)}` } }),
    }).then((r) => r.text());
  const bare = await bareServer();
  console.log(
    formatPaired(
      "request: validated check-run update ÷ GET of a bare node:http server",
      await measurePaired(
        () => timed(update),
        () => timed(() => fetch(bare.url).then((r) => r.text())),
        REPS,
      ),
    ),
  );
  await bare.close();

  const env = gh.gitAuthEnv(gh.mintToken());
  let clones = 0;
  const clone = await measurePaired(
    () => timed(() => git(["clone", "--quiet", repo.cloneUrl, join(work, `http-${(clones += 1)}`)], { cwd: work, env })),
    () => timed(() => git(["clone", "--quiet", "--no-local", repo.bareDir, join(work, `local-${(clones += 1)}`)], { cwd: work })),
    5,
  );
  console.log(formatPaired("clone: over the fake's smart HTTP ÷ git clone --no-local from disk", clone));
  if (gh.unexpectedRequests().length > 0) throw new Error("the benchmark made unexpected requests");
  await gh.close();
} finally {
  await rm(work, { recursive: true, force: true });
}
