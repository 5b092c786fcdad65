/**
 * Harness overhead of a whole story: `runStory` with instant scripted agents, a trivial
 * suite and a no-op provisioning command on a medium repository, against the sum of the raw
 * commands such a story needs (worktree add, provision, four agents, suite, clean clone
 * with its suite, commit, worktree remove), run back to back in the same process and the
 * same run, interleaved per repetition. Reports the median of the paired ratios with their
 * range and the load average, or "inconclusive" when the baseline moved more than the effect;
 * the target is ≤ 1.3.
 *
 *   npm run bench -- story-overhead [--files 3000] [--reps 5]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { exec, execShell } from "../src/exec/index.js";
import { loadWorkflow, parseHarnessConfig, runStory, type Reporter } from "../src/pipeline/index.js";
import { HARNESS_IDENTITY } from "../src/workspace/index.js";
import { probeSandbox, sandboxFromEnv } from "../src/sandbox/index.js";
import { formatPaired, measurePaired } from "./lib/paired.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const operatorSandbox = sandboxFromEnv();

const { values } = parseArgs({ options: { files: { type: "string", default: "3000" }, reps: { type: "string", default: "5" } } });
const FILES = Number(values.files);
const REPS = Number(values.reps);

// Instant agents: the implementer changes one file, the verifier passes, the rest do nothing.
const AGENT = `case "$HARNESS_STAGE" in implementer) echo change > feature.txt ;; verifier) echo '{"verdict":"pass","findings":[]}' > "$HARNESS_ARTIFACT_DIR/verdict.json" ;; esac`;
const SUITE = "true";
const PROVISION = "true";

async function run(argv: string[], cwd: string, env: Record<string, string> = {}): Promise<void> {
  const result = await exec(argv, { cwd, env: { set: env } });
  if (result.exitCode !== 0) throw new Error(`${argv.join(" ")} failed: ${result.tail}`);
}
/**
 * A raw shell as the harness runs it: `sh -c` (the provisioning override alone is `sh -lc`),
 * with an empty HOME, as every sandboxed step has; a login shell reading the operator's own
 * profile would make the baseline slower than what the harness does.
 */
async function sh(command: string, cwd: string, env: Record<string, string> = {}, login = false): Promise<void> {
  const result = await (login ? execShell : (text: string, options: Parameters<typeof execShell>[1]) => exec(["/bin/sh", "-c", text], options))(command, {
    cwd,
    env: { set: { HOME: emptyHome, ...env } },
  });
  if (result.exitCode !== 0) throw new Error(`${command} failed: ${result.tail}`);
}

/** A repository of `FILES` small files in folders of 30, one commit. */
async function mediumRepo(root: string): Promise<string> {
  const repo = join(root, "repo");
  mkdirSync(repo);
  for (let i = 0; i < FILES; i += 1) {
    const dir = join(repo, "src", `pkg${Math.floor(i / 30)}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `mod${i}.ts`), `export const value${i} = ${i};\n`.repeat(20));
  }
  await run(["git", "-c", "init.defaultBranch=main", "init", "-q"], repo);
  await run(["git", "add", "-A"], repo);
  await run(["git", "commit", "-q", "-m", "medium repository"], repo, HARNESS_IDENTITY);
  return repo;
}

/** The raw commands of one story, no harness in between. */
async function baseline(repo: string, root: string, rep: number): Promise<number> {
  const started = performance.now();
  const worktree = join(root, `raw-wt-${rep}`);
  const scratch = join(root, `raw-clone-${rep}`);
  await run(["git", "worktree", "add", "-q", "-b", `raw/${rep}`, worktree, "HEAD"], repo);
  await sh(PROVISION, worktree, {}, true);
  for (const stage of ["implementer", "tester", "verifier", "documenter"]) {
    const artifacts = join(root, `raw-artifacts-${rep}-${stage}`);
    mkdirSync(artifacts);
    if (stage === "verifier") await sh(SUITE, worktree);
    await sh(AGENT, worktree, { HARNESS_STAGE: stage, HARNESS_ARTIFACT_DIR: artifacts });
  }
  await run(["git", "ls-files", "--others", "--exclude-standard", "-z"], worktree);
  await run(["git", "diff-index", "-p", "--binary", `--output=${join(root, `raw-${rep}.patch`)}`, "HEAD", "--"], worktree);
  await run(["git", "clone", "--no-hardlinks", "-q", "--", worktree, scratch], root);
  writeFileSync(join(scratch, "feature.txt"), "change\n");
  await run(["git", "add", "-A"], scratch);
  await run(["git", "commit", "-q", "--no-verify", "-m", "clean clone"], scratch, HARNESS_IDENTITY);
  await sh(SUITE, scratch);
  rmSync(scratch, { recursive: true, force: true });
  await run(["git", "add", "--all"], worktree);
  await run(["git", "commit", "-q", "--no-verify", "-m", "story"], worktree, HARNESS_IDENTITY);
  await run(["git", "worktree", "remove", "--force", worktree], repo);
  return performance.now() - started;
}

/** The same story through the harness. */
async function harness(repo: string, root: string, rep: number): Promise<number> {
  const config = parseHarnessConfig(
    `agent:\n  command: ${JSON.stringify(AGENT)}\ntest:\n  command: ${JSON.stringify(SUITE)}\nprovision:\n  command: ${JSON.stringify(PROVISION)}\n`,
    "bench",
  );
  const workflow = loadWorkflow();
  const reporter: Reporter = { onEvent: async () => undefined };
  const started = performance.now();
  const outcome = await runStory({
    sandbox: operatorSandbox,
    repoDir: repo,
    story: { id: `bench-${rep}`, title: "Bench", body: "Change feature.txt." },
    branch: `harness/bench-${rep}`,
    baseRef: "HEAD",
    config,
    workflow,
    harnessHome: join(root, "home"),
    reporter,
    agentEnvAllow: [],
  });
  const elapsed = performance.now() - started;
  if (outcome.status !== "completed") throw new Error(`story blocked: ${outcome.failureClass ?? ""} ${outcome.detail ?? ""}`);
  return elapsed;
}

const root = mkdtempSync(join(tmpdir(), "harness-bench-story-"));
const emptyHome = join(root, "raw-home");
mkdirSync(emptyHome);
try {
  const repo = await mediumRepo(root);
  // Warm-up of each side (module loading, schema compilation, page cache), then pairs A B, B A, …
  const result = await measurePaired(
    (rep) => harness(repo, root, rep),
    (rep) => baseline(repo, root, rep),
    REPS,
  );
  // The harness side runs its provisioning, agents and suites in the operator's sandbox (on unless HARNESS_SANDBOX=off).
  console.log(`files=${FILES} reps=${REPS} sandbox=${(await probeSandbox(sandboxFromEnv())).state}`);
  console.log(formatPaired("whole story, harness ÷ its raw commands", result, { max: 1.3 }));
  console.log(`per-pair ratios: ${result.ratios.map((x) => x.toFixed(2)).join(", ")}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
