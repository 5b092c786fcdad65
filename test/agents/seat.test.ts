import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runSeat } from "../../src/agents/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const sandbox = sandboxFromEnv();

afterAll(removeTempDirs);

/** A worktree, prompt and artifact dir whose paths contain a space and a quote. */
function seatDirs(): { worktree: string; promptFile: string; artifactDir: string; logPath: string } {
  const dir = makeTempDir("harness-seat-");
  const worktree = join(dir, "work tree");
  const artifactDir = join(dir, "it's", "artifacts");
  mkdirSync(worktree, { recursive: true });
  mkdirSync(artifactDir, { recursive: true });
  const promptFile = join(dir, "prompt.md");
  writeFileSync(promptFile, "do the thing\n");
  return { worktree, promptFile, artifactDir, logPath: join(dir, "agent.log") };
}

describe("runSeat", () => {
  it("runs a template in the worktree with quoted paths and the HARNESS_* environment", async () => {
    const dirs = seatDirs();
    const result = await runSeat({
      sandbox,
      ...dirs,
      launch: { command: `cp {prompt_file} {artifact_dir}/seen.md && pwd > {artifact_dir}/pwd && env > {artifact_dir}/env` },
      stage: "tester",
      attempt: 2,
      timeoutMs: 10_000,
      envAllow: [],
    });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    expect(readFileSync(join(dirs.artifactDir, "seen.md"), "utf8")).toBe("do the thing\n");
    expect(readFileSync(join(dirs.artifactDir, "pwd"), "utf8").trim()).toBe(dirs.worktree);
    const env = readFileSync(join(dirs.artifactDir, "env"), "utf8");
    expect(env).toContain("HARNESS_STAGE=tester\n");
    expect(env).toContain("HARNESS_ATTEMPT=2\n");
    expect(env).toContain(`HARNESS_PROMPT_FILE=${dirs.promptFile}\n`);
    expect(env).toContain(`HARNESS_ARTIFACT_DIR=${dirs.artifactDir}\n`);
  });

  it("reports a non-zero exit and a timeout", async () => {
    const dirs = seatDirs();
    const common = { ...dirs, stage: "implementer", attempt: 1, envAllow: [] };
    expect(await runSeat({ sandbox, ...common, launch: { command: "echo nope >&2; exit 4" }, timeoutMs: 10_000 })).toMatchObject({
      exitCode: 4,
      timedOut: false,
    });
    expect(readFileSync(dirs.logPath, "utf8")).toContain("nope");
    const hung = await runSeat({ sandbox, ...common, launch: { command: "sleep 30" }, timeoutMs: 300, killGraceMs: 200 });
    expect(hung.timedOut).toBe(true);
    expect(hung.exitCode).toBeNull();
  });
});
