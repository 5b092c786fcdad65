/**
 * `harness run` as a user runs it (the built `bin/harness.js`, a real process, its output read
 * back): a blocked story shows the failing step's last lines with the path of its whole log and
 * what to do; a suite that cannot start (exit 127) blocks at once instead of being retried; the
 * verifier's re-run and its verdict are shown.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { commitAll, removeTempDirs, writeFiles } from "../support/tmp.js";
import { makeScenario, q, AGENT_SCRIPT, scenarioSandboxEnv, type Scenario } from "../pipeline/helpers.js";

afterAll(removeTempDirs);

const BIN = fileURLToPath(new URL("../../bin/harness.js", import.meta.url));

/** A repository configured for the scripted agent in `scenario`, with `test` as its suite, and a story file. */
async function project(scenario: string, test: string, maxAttempts: number): Promise<Scenario & { story: string }> {
  const s = await makeScenario();
  const yaml = [
    "agent:",
    `  command: ${JSON.stringify(`sh ${q(AGENT_SCRIPT)} ${scenario} ${q(s.launches)}`)}`,
    "test:",
    `  command: ${JSON.stringify(test)}`,
    "provision:",
    '  command: "true"',
    `max_attempts: ${maxAttempts}`,
  ].join("\n");
  writeFiles(s.repo, { ".github/harness.yml": `${yaml}\n` });
  await commitAll(s.repo, "configure the harness");
  const story = join(s.dir, "greet.md");
  writeFileSync(story, "# Greet the user\n\nWrite feature.txt saying hello.\n");
  return { ...s, story };
}

/** Runs `harness run` in the repository as a user would, with the scenario's sandbox grants. */
async function harnessRun(s: Scenario & { story: string }): Promise<{ code: number | null; out: string; err: string }> {
  const out = join(s.dir, "stdout.txt");
  const err = join(s.dir, "stderr.txt");
  const result = await exec(["/bin/sh", "-c", `exec ${q(process.execPath)} ${q(BIN)} run --story ${q(s.story)} >${q(out)} 2>${q(err)}`], {
    cwd: s.repo,
    timeoutMs: 240_000,
    env: { allow: ["PATH"], set: { HARNESS_HOME: s.home, ...scenarioSandboxEnv(s) } },
  });
  return { code: result.exitCode, out: readFileSync(out, "utf8"), err: readFileSync(err, "utf8") };
}

describe("harness run on a blocked story", () => {
  it("shows the failing suite's last lines, its log's path and what to do", async () => {
    const failing = 'if test -f feature.txt; then echo "greeting: expected hello, got nothing"; echo "  at greet.test.js:3"; exit 1; fi';
    const s = await project("complete", failing, 2);
    const { code, out, err } = await harnessRun(s);
    expect(code).toBe(1);
    // An ordinary failure is retried.
    expect(out).toMatch(/^retry +attempt 2 from implementer \(suite-failed at /m);
    expect(err).toMatch(/story blocked \(retry-ceiling\)/);
    const shown =
      /the last lines of the suite \(`.+`\) \(whole log: (\S+suite\.log)\):\ngreeting: expected hello, got nothing\n {2}at greet\.test\.js:3\n/.exec(err);
    expect(shown).not.toBeNull();
    expect(readFileSync(shown?.[1] ?? "", "utf8")).toContain("greeting: expected hello, got nothing");
    expect(err).toMatch(/^what to do: Every attempt was sent back\..* Then run harness run again \(--continue .*--fresh .*\)\.$/m);
    expect(err).toMatch(/^run directory: /m);
  }, 300_000);

  it("blocks a suite that cannot start (exit 127) at once, without another attempt", async () => {
    const s = await project("complete", "if test -f feature.txt; then exec no-such-test-runner --all; fi", 3);
    const { code, out, err } = await harnessRun(s);
    expect(code).toBe(1);
    expect(out).not.toMatch(/^retry /m);
    expect(readFileSync(s.launches, "utf8").trim().split("\n")).toEqual(["implementer 1", "tester 1"]);
    expect(err).toMatch(/story blocked \(environment\): .*cannot start \(exit 127/);
    expect(err).toMatch(/the last lines of the suite .*\(whole log: \S+suite\.log\):\n.*no-such-test-runner.*not found/);
    expect(err).toMatch(/^what to do: The suite's command cannot start/m);
  }, 300_000);
});

describe("harness run on a story that completes", () => {
  it("shows the verifier's re-run, why it was asked, and the verdict it gave", async () => {
    const s = await project("verdict-on-rerun", "true", 1);
    const { code, out, err } = await harnessRun(s);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    const rerun = /^verifier +attempt 1 +re-run: .*verdict\.json.* \(log: (\S+agent-rerun-1\.log)\)$/m.exec(out);
    expect(rerun).not.toBeNull();
    expect(existsSync(rerun?.[1] ?? "")).toBe(true);
    expect(out).toMatch(/^verifier +attempt 1 +verdict pass: checked on the re-run$/m);
  }, 300_000);
});
