import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli.js";
import type { CliIO } from "../../src/cli/usage.js";
import { git } from "../../src/workspace/index.js";
import { readJournal } from "../../src/pipeline/index.js";
import { schemas } from "../../src/schema/index.js";
import { commitAll, removeTempDirs, writeFiles } from "../support/tmp.js";
import { makeScenario, q, AGENT_SCRIPT, scenarioSandboxEnv, type Scenario } from "../pipeline/helpers.js";

afterAll(removeTempDirs);

function captureIO(cwd: string, home: string, sandboxEnv: Record<string, string>): CliIO & { out: string; err: string } {
  const io = {
    out: "",
    err: "",
    cwd,
    env: { ...process.env, HARNESS_HOME: home, ...sandboxEnv },
    stdout: (text: string) => void (io.out += text),
    stderr: (text: string) => void (io.err += text),
  };
  return io;
}

const agentCmd = (s: Scenario, scenario: string): string => `sh ${q(AGENT_SCRIPT)} ${scenario} ${q(s.launches)}`;

/** A repository whose .github/harness.yml drives the scripted agent; a story file beside it. */
async function cliScenario(testCommand: string): Promise<Scenario & { story: string }> {
  const s = await makeScenario();
  const yaml = [
    "agent:",
    `  command: ${JSON.stringify(agentCmd(s, "complete"))}`,
    "test:",
    `  command: ${JSON.stringify(testCommand)}`,
    "provision:",
    '  command: "true"',
  ].join("\n");
  writeFiles(s.repo, { ".github/harness.yml": `${yaml}\n` });
  await commitAll(s.repo, "configure the harness");
  const story = join(s.dir, "Greet Users.md");
  writeFileSync(story, "# Greet the user\n\nWrite feature.txt saying hello.\n");
  return { ...s, story };
}

describe("harness run", () => {
  it("runs the whole pipeline, prints a line per step and leaves the user's tree and branch alone", async () => {
    const s = await cliScenario("false");
    writeFileSync(join(s.repo, "README.md"), "# user edit in progress\n");
    const statusBefore = await git(["status", "--porcelain"], { cwd: s.repo });
    const io = captureIO(s.repo, s.home, scenarioSandboxEnv(s));
    // The flag overrides the configuration's failing test command.
    const code = await main(["run", "--story", s.story, "--test-cmd", "test -f feature.txt"], io);

    expect(io.err).toBe("");
    expect(code).toBe(0);
    for (const stage of ["implementer", "tester", "verifier", "documenter"]) {
      expect(io.out).toMatch(new RegExp(`^${stage} +attempt 1 +\\d+(ms|\\.\\ds) +passed$`, "m"));
    }
    expect(io.out).toMatch(/^verifier +attempt 1 +clean clone \S+ passed$/m);
    // The output ends with the commit on the story branch.
    const commit = /^completed +commit ([0-9a-f]{40}) on harness\/story-greet-users$/.exec(io.out.trimEnd().split("\n").at(-1) ?? "")?.[1];
    expect(commit).toBeDefined();
    expect(await git(["rev-parse", "harness/story-greet-users"], { cwd: s.repo })).toBe(commit);
    expect(await git(["symbolic-ref", "--short", "HEAD"], { cwd: s.repo })).toBe("main");
    expect(await git(["status", "--porcelain"], { cwd: s.repo })).toBe(statusBefore);
    expect(readFileSync(join(s.repo, "README.md"), "utf8")).toBe("# user edit in progress\n");
    // Every journal line validates.
    const runDir = /^run directory: (.+)$/m.exec(io.out)?.[1] ?? "";
    const lines = readFileSync(join(runDir, "execution-history.ndjson"), "utf8").trim().split("\n");
    for (const line of lines) expect(schemas().issues("execution-history", JSON.parse(line))).toEqual([]);
    expect(readJournal(join(runDir, "execution-history.ndjson"))).toHaveLength(lines.length);
  });

  it("exits 1 when the story is blocked, naming the failure class and the run directory", async () => {
    const s = await cliScenario("false");
    const io = captureIO(s.dir, s.home, scenarioSandboxEnv(s));
    const code = await main(["run", s.repo, "--story", s.story, "--agent-cmd", agentCmd(s, "complete")], io);
    expect(code).toBe(1);
    expect(io.err).toMatch(/story blocked \(retry-ceiling\)/);
    expect(io.err).toContain(join(s.home, "runs", "greet-users"));
    expect(io.out).toMatch(/^retry +attempt 2 from implementer \(suite-failed at verifier\)$/m);
  });

  it("exits 2 for bad arguments or configuration, naming what is wrong", async () => {
    const s = await cliScenario("true");
    const run = async (args: string[]): Promise<{ code: number; err: string }> => {
      const io = captureIO(s.repo, s.home, scenarioSandboxEnv(s));
      return { code: await main(["run", ...args], io), err: io.err };
    };
    expect(await run([])).toMatchObject({ code: 2, err: expect.stringContaining("--story <file.md> is required") });
    expect(await run(["--story", s.story, "--agent", "gpt"])).toMatchObject({ code: 2, err: expect.stringContaining("--agent must be one of") });
    expect(await run(["--story", s.story, "--agent", "aider", "--agent-cmd", "x"])).toMatchObject({ code: 2 });
    expect(await run([s.dir, "--story", s.story])).toMatchObject({ code: 2, err: expect.stringContaining("is not a git repository") });
    const empty = join(s.dir, "no-commits");
    mkdirSync(empty);
    await git(["init", "-q"], { cwd: empty });
    expect(await run([empty, "--story", s.story])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/no-commits has no commit yet: a story starts from HEAD/),
    });
    expect(await run(["--story", s.story, "--bogus"])).toMatchObject({ code: 2 });

    const bad = join(s.dir, "bad-workflow.json");
    writeFileSync(bad, JSON.stringify({ name: "x", max_attempts: 0, stages: [], on_failure: { retry_stage: "a" } }));
    const invalid = await run(["--story", s.story, "--workflow", bad]);
    expect(invalid.code).toBe(2);
    expect(invalid.err).toContain(bad);
    expect(invalid.err).toContain("$.max_attempts");

    writeFiles(s.repo, { ".github/harness.yml": "test:\n  comand: x\n" });
    const typo = await run(["--story", s.story]);
    expect(typo.code).toBe(2);
    expect(typo.err).toContain(`${join(s.repo, ".github", "harness.yml")}: $.test.comand is not an allowed key`);
    expect(await git(["branch", "--list", "harness/*"], { cwd: s.repo })).toBe("");
  });

  it("asks for --continue or --fresh when the story branch exists, instead of stacking a second run on it", async () => {
    const s = await cliScenario("test -f feature.txt");
    const first = captureIO(s.repo, s.home, scenarioSandboxEnv(s));
    expect(await main(["run", "--story", s.story], first)).toBe(0);
    const tip = await git(["rev-parse", "harness/story-greet-users"], { cwd: s.repo });

    const again = captureIO(s.repo, s.home, scenarioSandboxEnv(s));
    expect(await main(["run", "--story", s.story], again)).toBe(2);
    expect(again.err).toContain("branch harness/story-greet-users exists");
    expect(again.err).toContain("--continue");
    expect(again.err).toContain("--fresh");
    expect(await git(["rev-parse", "harness/story-greet-users"], { cwd: s.repo })).toBe(tip);
    expect(await main(["run", "--story", s.story, "--continue", "--fresh"], captureIO(s.repo, s.home, scenarioSandboxEnv(s)))).toBe(2);

    // --continue carries on from the tip: the new commit's parent is the earlier run's.
    expect(await main(["run", "--story", s.story, "--continue"], captureIO(s.repo, s.home, scenarioSandboxEnv(s)))).toBe(0);
    const continued = await git(["rev-parse", "harness/story-greet-users"], { cwd: s.repo });
    expect(await git(["rev-parse", `${continued}^`], { cwd: s.repo })).toBe(tip);

    // --fresh starts again from HEAD: the earlier commits are no longer on the branch.
    expect(await main(["run", "--story", s.story, "--fresh"], captureIO(s.repo, s.home, scenarioSandboxEnv(s)))).toBe(0);
    const fresh = await git(["rev-parse", "harness/story-greet-users"], { cwd: s.repo });
    expect(await git(["rev-parse", `${fresh}^`], { cwd: s.repo })).toBe(await git(["rev-parse", "HEAD"], { cwd: s.repo }));
  });

  it("a blocked seat shows the last lines of its agent log, credentials redacted, with the log's path", async () => {
    const s = await cliScenario("true");
    // A provider's 500 after the CLI's retries, in Claude Code's words, after echoing its key.
    const agent = `echo "using key $HARNESS_TEST_AGENT_KEY"; echo "API Error: 500 upstream failed. This is a server-side issue"; exit 1`;
    writeFiles(s.repo, {
      ".github/harness.yml": `agent:\n  command: ${JSON.stringify(agent)}\n  env: [HARNESS_TEST_AGENT_KEY]\ntest:\n  command: "true"\nprovision:\n  command: "true"\n`,
    });
    await commitAll(s.repo, "an agent whose provider fails");
    process.env.HARNESS_TEST_AGENT_KEY = "sk-live-0123456789abcdef";
    try {
      const io = captureIO(s.repo, s.home, scenarioSandboxEnv(s));
      expect(await main(["run", "--story", s.story], io)).toBe(1);
      expect(io.err).toMatch(/story blocked \(agent-unavailable\)/);
      expect(io.err).toContain("provider-unreachable");
      expect(io.err).toMatch(/the last lines of the agent log \(\S+agent\.log\):\nusing key \[REDACTED\]\nAPI Error: 500 upstream failed/);
      expect(io.err).not.toContain("0123456789abcdef");
    } finally {
      delete process.env.HARNESS_TEST_AGENT_KEY;
    }
  });
});

describe("harness run and the test-integrity gate", () => {
  /** A repository tested with node's runner, two test files; the scripted agent deletes one of them. */
  async function integrityScenario(): Promise<Scenario & { story: string }> {
    const s = await makeScenario({
      "test/math.test.mjs": 'import test from "node:test";\nimport assert from "node:assert";\n\ntest("adds", () => {\n  assert.equal(1 + 2, 3);\n});\n',
      "test/other.test.mjs": 'import test from "node:test";\nimport assert from "node:assert";\n\ntest("holds", () => {\n  assert.ok(true);\n});\n',
    });
    const yaml = [
      "agent:",
      `  command: ${JSON.stringify(agentCmd(s, "delete-test"))}`,
      "test:",
      '  command: "node --test"',
      "provision:",
      '  command: "true"',
      "max_attempts: 1",
    ].join("\n");
    writeFiles(s.repo, { ".github/harness.yml": `${yaml}\n` });
    await commitAll(s.repo, "configure the harness");
    const story = join(s.dir, "Greet Users.md");
    writeFileSync(story, "# Greet the user\n\nWrite feature.txt saying hello.\n");
    return { ...s, story };
  }

  it("blocks a story whose agent deletes a test file as test-integrity, then completes it with --accept-integrity, listing what was accepted", async () => {
    const s = await integrityScenario();
    const io = captureIO(s.repo, s.home, scenarioSandboxEnv(s));
    expect(await main(["run", "--story", s.story], io)).toBe(1);
    expect(io.err).toMatch(
      /story blocked \(test-integrity\): attempt 1 of 1 failed at integrity \(test-integrity\): the change weakens the test suite: test\/math\.test\.mjs:1: test file deleted/,
    );
    expect(io.out).toMatch(/^integrity +attempt 1 +\d+ file\(s\) changed, 2 finding\(s\), 0 accepted; tests run compared \(node 2 → 1\)$/m);
    expect(io.out).toContain("✗ test/math.test.mjs:1 test file deleted (it held 1 test case and 1 assertion) (test-file-deleted)");
    expect(io.out).toContain("✗ the suite node ran 2 tests on the base and 1 in the clean clone (fewer-tests-run)");

    const again = captureIO(s.repo, s.home, { ...scenarioSandboxEnv(s), USER: "maintainer" });
    expect(await main(["run", "--story", s.story, "--continue", "--accept-integrity"], again)).toBe(0);
    // This run's own baseline ran on the blocked commit, where the file is already gone; the count is still the base's (2 → 1), and both findings are accepted.
    expect(again.out).toMatch(/^integrity +attempt 1 +\d+ file\(s\) changed, 0 finding\(s\), 2 accepted; tests run compared \(node 2 → 1\)$/m);
    expect(again.out).toContain(
      "✓ accepted by local user maintainer (--accept-integrity): the suite node ran 2 tests on the base and 1 in the clean clone (fewer-tests-run)",
    );
    expect(again.out).toContain("✓ accepted by local user maintainer (--accept-integrity): test/math.test.mjs:1 test file deleted");
    expect(again.out).toMatch(/^completed +commit [0-9a-f]{40} on harness\/story-greet-users$/m);
    // The second run started from the first one's blocked commit, where the file was already gone: it was judged against main all the same.
    expect(await git(["cat-file", "-e", "harness/story-greet-users:test/math.test.mjs"], { cwd: s.repo }).catch(() => "absent")).toBe("absent");
  });
});
