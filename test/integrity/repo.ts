/**
 * Real repositories for the integrity gate's tests: a base commit, a change made in the working
 * tree as an agent would leave it, the suite run for real, and the gate's verdict on the change.
 */
import { mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { judgeChange, readRunCounts, readWorkChange, type IntegrityPolicy, type IntegrityVerdict, type RunCounts } from "../../src/integrity/index.js";
import { git } from "../../src/workspace/index.js";
import { initRepo, makeTempDir, writeFiles, type FileSpec } from "../support/tmp.js";

export interface GateRepo {
  dir: string;
  base: string;
  scratch: string;
}

/** A repository whose one commit holds `files`. */
export async function gateRepo(files: Record<string, FileSpec>): Promise<GateRepo> {
  const root = makeTempDir("harness-integrity-");
  const dir = join(root, "repo");
  const base = await initRepo(dir, files);
  if (base === undefined) throw new Error("a gate repository needs files");
  const scratch = join(root, "scratch");
  mkdirSync(scratch);
  return { dir, base, scratch };
}

/** A change left in the working tree: files written, removed and renamed (none of it staged). */
export interface Edit {
  write?: Record<string, FileSpec>;
  remove?: string[];
  rename?: Array<[from: string, to: string]>;
}

export function applyEdit(repo: GateRepo, edit: Edit): void {
  for (const [from, to] of edit.rename ?? []) {
    mkdirSync(dirname(join(repo.dir, to)), { recursive: true });
    renameSync(join(repo.dir, from), join(repo.dir, to));
  }
  for (const path of edit.remove ?? []) rmSync(join(repo.dir, path));
  writeFiles(repo.dir, edit.write ?? {});
}

/** Puts the working tree back to the base commit (tracked and untracked files alike). */
export async function resetRepo(repo: GateRepo): Promise<void> {
  await git(["reset", "-q", "--hard", repo.base], { cwd: repo.dir });
  await git(["clean", "-q", "-fdx"], { cwd: repo.dir });
}

/** Runs the suite for real; returns its exit code and its whole output. */
export async function runSuite(repo: GateRepo, command: string): Promise<{ exitCode: number | null; output: string }> {
  const log = join(repo.scratch, `suite-${Date.now()}-${Math.random().toString(36).slice(2)}.log`);
  const result = await exec(["/bin/sh", "-c", command], {
    cwd: repo.dir,
    logPath: log,
    timeoutMs: 120_000,
    env: { allow: ["GOPATH", "GOCACHE", "GOFLAGS", "CARGO_HOME", "RUSTUP_HOME"] },
  });
  return { exitCode: result.exitCode, output: readFileSync(log, "utf8") };
}

export const HOLD: IntegrityPolicy = { allowed: () => false, workflows: "hold" };

/** The gate's verdict on the working tree's change, with run counts when given. */
export async function judge(repo: GateRepo, runs: { base?: RunCounts; head?: RunCounts } = {}, policy: IntegrityPolicy = HOLD): Promise<IntegrityVerdict> {
  const changes = await readWorkChange({ worktree: repo.dir, base: repo.base });
  return judgeChange(changes, runs, policy);
}

/** The kinds of a verdict's findings, sorted, with their files. */
export function kinds(verdict: IntegrityVerdict): string[] {
  return verdict.findings.map((finding) => `${finding.kind} ${finding.file}`).sort();
}

/**
 * Applies `edit`, checks that the suite still passes (the point: every finding is on a green
 * change), and returns the gate's verdict with both runs' counts; then resets the repository.
 */
export async function judgeGreenChange(
  repo: GateRepo,
  command: string,
  edit: Edit,
  policy: IntegrityPolicy = HOLD,
): Promise<{ verdict: IntegrityVerdict; base: RunCounts; head: RunCounts }> {
  const before = await runSuite(repo, command);
  if (before.exitCode !== 0) throw new Error(`the suite fails on the base:\n${before.output}`);
  applyEdit(repo, edit);
  try {
    const after = await runSuite(repo, command);
    if (after.exitCode !== 0) throw new Error(`the change's suite fails, so it is no green change:\n${after.output}`);
    const base = readRunCounts(before.output);
    const head = readRunCounts(after.output);
    return { verdict: await judge(repo, { base, head }, policy), base, head };
  } finally {
    await resetRepo(repo);
  }
}
