import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { git } from "../../src/workspace/index.js";
import { loadWorkflow } from "../../src/pipeline/index.js";
import { schemas } from "../../src/schema/index.js";
import { processWithTag, removeTempDirs } from "../support/tmp.js";
import { kinds, launches, makeScenario, ofKind, runScenario, scriptedConfig } from "./helpers.js";
import { until } from "../support/poll.js";

afterAll(removeTempDirs);

describe("runStory", () => {
  it("completes a story first time and commits it to the branch without the receipt", async () => {
    const s = await makeScenario();
    const headBefore = await git(["rev-parse", "HEAD"], { cwd: s.repo });
    const { outcome, journal, reporter } = await runScenario(s, scriptedConfig(s, "complete"));

    expect(outcome).toMatchObject({ status: "completed", branch: "harness/story-demo" });
    expect(launches(s)).toEqual(["implementer 1", "tester 1", "verifier 1", "documenter 1"]);
    expect(kinds(journal)[0]).toBe("run.started");
    expect(kinds(journal).at(-1)).toBe("story.completed");
    expect(reporter.events).toEqual(journal);
    expect(ofKind(journal, "provision.succeeded")[0]).toMatchObject({ phase: "worktree", cmd: "true", skipped: false });
    // The verifier's gate is the clean clone: one run of the suite, where the commit will exist.
    expect(ofKind(journal, "gate.finished")).toEqual([
      expect.objectContaining({ stage: "verifier", exitCode: 0, command: "test -f feature.txt", where: "clean-clone" }),
    ]);
    expect(ofKind(journal, "gate.finished")[0]?.worktree).toBeUndefined();
    expect(ofKind(journal, "verdict.recorded")[0]).toMatchObject({ verdict: "pass", findings: ["looks right"] });
    expect(ofKind(journal, "clean_clone.finished")[0]?.result).toMatchObject({ ran: true, exitCode: 0 });
    // The clean clone ran before the verifier judged it, and before the documenter.
    const order = journal.map((event) => (event.kind === "stage.started" ? event.stage : event.kind));
    expect(order.indexOf("clean_clone.finished")).toBeGreaterThan(order.indexOf("verifier"));
    expect(order.indexOf("clean_clone.finished")).toBeLessThan(order.indexOf("gate.finished"));
    expect(order.indexOf("gate.finished")).toBeLessThan(order.indexOf("verdict.recorded"));
    expect(order.indexOf("clean_clone.finished")).toBeLessThan(order.indexOf("documenter"));
    const result = JSON.parse(readFileSync(join(outcome.runDir, "attempts", "1", "clean-clone-result.json"), "utf8")) as unknown;
    expect(schemas().issues("clean-clone-result", result)).toEqual([]);

    const commit = outcome.commit ?? "";
    expect(await git(["rev-parse", "harness/story-demo"], { cwd: s.repo })).toBe(commit);
    const files = (await git(["show", "--name-only", "--format=", commit], { cwd: s.repo })).split("\n");
    expect(files.sort()).toEqual(["README.md", "feature.txt", "tests/check.sh"]);
    const message = await git(["log", "-1", "--format=%B", commit], { cwd: s.repo });
    expect(message).toContain("Story demo: Greet the user");
    expect(message).toMatch(/\nStory: demo\n?$/);
    // The user's repository: same HEAD, clean tree, worktree gone.
    expect(await git(["rev-parse", "HEAD"], { cwd: s.repo })).toBe(headBefore);
    expect(await git(["status", "--porcelain"], { cwd: s.repo })).toBe("");
    expect(existsSync(outcome.worktree)).toBe(false);
  });

  it("retries a change that fails only in the clean clone, with the result in the next prompt", async () => {
    const s = await makeScenario();
    const config = scriptedConfig(s, "clean-clone", { test: "test -f generated/data.txt" });
    const { outcome, journal } = await runScenario(s, config);

    expect(outcome.status).toBe("completed");
    const checks = ofKind(journal, "clean_clone.finished");
    expect(checks.map((check) => [check.attempt, check.result.ran, check.result.exitCode])).toEqual([
      [1, true, 1],
      [2, true, 0],
    ]);
    expect(ofKind(journal, "retry.scheduled")).toEqual([
      expect.objectContaining({ failedAttempt: 1, nextAttempt: 2, fromStage: "verifier", retryStage: "implementer", failureClass: "clean-clone-failed" }),
    ]);
    expect(ofKind(journal, "attempt.archived")).toEqual([expect.objectContaining({ attempt: 1 })]);
    const retryPrompt = readFileSync(join(outcome.runDir, "attempts", "2", "implementer", "prompt.md"), "utf8");
    expect(retryPrompt).toContain("The suite failed in a fresh clone with the change committed");
    expect(retryPrompt).toContain("exit code 1");
    // The tester, who may have written the test that failed there, sees it too.
    const testerPrompt = readFileSync(join(outcome.runDir, "attempts", "2", "tester", "prompt.md"), "utf8");
    expect(testerPrompt).toContain("The suite failed in a fresh clone with the change committed");
    // The harness never wrote a verdict or guidance of its own for this retry.
    expect(retryPrompt).toContain("### Retry guidance\n\n(none)");
    // Archived attempt keeps its artifacts and says why it failed.
    const archived = readdirSync(join(outcome.runDir, "attempts", "1")).sort();
    expect(archived).toEqual(expect.arrayContaining(["archive.json", "clean-clone-result.json", "implementer", "verifier"]));
    // The clean clone is the verifier's gate: a red one sends the attempt back before the verifier's seat is spent.
    expect(launches(s)).toEqual(["implementer 1", "tester 1", "implementer 2", "tester 2", "verifier 2", "documenter 2"]);
    // It passed where it stands: the in-tree re-run, journaled on the gate, is what made it clean-clone-failed.
    expect(ofKind(journal, "gate.finished").map((gate) => [gate.attempt, gate.where, gate.exitCode, gate.worktree?.exitCode])).toEqual([
      [1, "clean-clone", 1, 0],
      [2, "clean-clone", 0, undefined],
    ]);
  });

  it("blocks with retry-ceiling when every attempt fails, carrying the verifier's own findings", async () => {
    const s = await makeScenario();
    const config = scriptedConfig(s, "ceiling");
    config.maxAttempts = 2;
    const { outcome, journal } = await runScenario(s, config);

    expect(outcome).toMatchObject({ status: "blocked", failureClass: "retry-ceiling" });
    expect(ofKind(journal, "verdict.recorded").map((event) => event.verdict)).toEqual(["fail", "fail"]);
    expect(ofKind(journal, "attempt.archived").map((event) => event.attempt)).toEqual([1, 2]);
    const blocked = ofKind(journal, "story.blocked")[0];
    expect(blocked?.commit).toBe(outcome.commit);
    const prompt = readFileSync(join(outcome.runDir, "attempts", "2", "implementer", "prompt.md"), "utf8");
    expect(prompt).toContain("- no test covers the greeting");
    expect(prompt).toContain("add a test for the greeting");
    // The work so far is committed with the failure class as a trailer; no receipt in it.
    const message = await git(["log", "-1", "--format=%B", outcome.commit ?? ""], { cwd: s.repo });
    expect(message).toMatch(/Story: demo\nFailure-Class: retry-ceiling\n?$/);
    const files = await git(["show", "--name-only", "--format=", outcome.commit ?? ""], { cwd: s.repo });
    expect(files).toContain("feature.txt");
    expect(files).not.toContain(".harness-provisioned");
  });

  it("blocks as infrastructure, without a retry, when the clean-clone check cannot run", async () => {
    const s = await makeScenario();
    // A relative interpreter is made by provisioning, so preflight cannot refuse it; here it never appears.
    const config = scriptedConfig(s, "complete", { extra: "clean_clone:\n  interpreter: .venv/bin/python3" });
    const { outcome, journal } = await runScenario(s, config);
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "clean-clone-not-run" });
    expect(ofKind(journal, "clean_clone.finished")[0]?.result).toMatchObject({ ran: false, interpreter: expect.stringContaining(".venv/bin/python3") });
    expect(ofKind(journal, "retry.scheduled")).toEqual([]);
    expect(ofKind(journal, "attempt.archived")).toEqual([]);
    expect(launches(s)).toEqual(["implementer 1", "tester 1"]);
    const message = await git(["log", "-1", "--format=%B", outcome.commit ?? ""], { cwd: s.repo });
    expect(message).toMatch(/Failure-Class: clean-clone-not-run\n?$/);
  });

  it("counts a suite that hangs only in the clean clone as a failed run to retry, not as infrastructure", async () => {
    const s = await makeScenario();
    // Clean only once committed: the suite hangs there and nowhere else.
    const config = scriptedConfig(s, "complete", { test: 'test -n "$(git status --porcelain)" || sleep 30; test -f feature.txt' });
    // The worktree's run must finish inside it even on a loaded machine; the clean clone's sleep never does.
    config.test.timeoutMs = 6000;
    config.maxAttempts = 1;
    const { outcome, journal } = await runScenario(s, config);
    expect(ofKind(journal, "clean_clone.finished")[0]?.result).toMatchObject({ ran: true, timedOut: true });
    expect(ofKind(journal, "clean_clone.finished")[0]?.result.exitCode).toBeUndefined();
    expect(ofKind(journal, "stage.finished").at(-1)).toMatchObject({ stage: "verifier", failureClass: "clean-clone-failed" });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "retry-ceiling" });
  });

  it("counts a suite gate that hangs as a failed gate, in a workflow without a clean-clone check", async () => {
    const s = await makeScenario();
    // A suite that exits 0 when told to stop still ran out of time.
    const config = scriptedConfig(s, "complete", { test: "trap 'exit 0' TERM; sleep 600 & wait" });
    config.test.timeoutMs = 1000;
    config.maxAttempts = 1;
    const base = loadWorkflow();
    const workflow = { ...base, stages: base.stages.map(({ cleanClone: _dropped, ...stage }) => stage) };
    const { outcome, journal } = await runScenario(s, config, { workflow });
    expect(ofKind(journal, "gate.finished")[0]).toMatchObject({ stage: "verifier", timedOut: true });
    expect(ofKind(journal, "clean_clone.finished")).toEqual([]);
    expect(ofKind(journal, "stage.finished").at(-1)).toMatchObject({ stage: "verifier", outcome: "failed", failureClass: "suite-failed" });
    expect(launches(s)).toEqual(["implementer 1", "tester 1"]);
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "retry-ceiling" });
  });

  it("links the worktree's installed dependencies into the clean clone unless told otherwise", async () => {
    const install = "mkdir -p node_modules && echo dep > node_modules/dep.txt";
    const s = await makeScenario({ ".gitignore": "node_modules/\n" });
    const config = scriptedConfig(s, "complete", { test: "test -f node_modules/dep.txt && test -f feature.txt" });
    config.provision.command = install;
    expect((await runScenario(s, config)).outcome.status).toBe("completed");

    const t = await makeScenario({ ".gitignore": "node_modules/\n" });
    const bare = scriptedConfig(t, "complete", { test: "test -f node_modules/dep.txt", extra: "clean_clone:\n  link: []" });
    bare.provision.command = install;
    bare.maxAttempts = 1;
    const { outcome, journal } = await runScenario(t, bare);
    expect(outcome.failureClass).toBe("retry-ceiling");
    expect(ofKind(journal, "stage.finished").at(-1)).toMatchObject({ stage: "verifier", failureClass: "clean-clone-failed" });
  });

  it("kills an agent that hangs at its timeout", async () => {
    const s = await makeScenario();
    const config = scriptedConfig(s, "hang");
    // Generous, so even a loaded machine lets the agent write its tag before the timeout; the
    // 60 s sleep outlives jest's deadline if never ended.
    config.agent.timeoutMs = 10_000;
    config.maxAttempts = 1;
    const { outcome, journal } = await runScenario(s, config);

    expect(outcome).toMatchObject({ status: "blocked", failureClass: "retry-ceiling" });
    expect(ofKind(journal, "stage.finished")[0]).toMatchObject({ stage: "implementer", outcome: "failed", failureClass: "agent-timeout" });
    const tag = readFileSync(`${s.launches}.pid`, "utf8").trim();
    expect(tag).toMatch(/^harness-hang-/);
    await until("the tagged process to end", () => !processWithTag(tag), 5000);
  });

  it("stops a running story on its abort signal as interrupted, ending the agent's process tree", async () => {
    const s = await makeScenario();
    const controller = new AbortController();
    const running = runScenario(s, scriptedConfig(s, "hang"), { signal: controller.signal });
    await until("the launch's pid file", () => existsSync(`${s.launches}.pid`), 10_000);
    const runningTag = readFileSync(`${s.launches}.pid`, "utf8").trim();
    await until("the running process", () => processWithTag(runningTag), 5000);
    controller.abort();
    const { outcome, journal } = await running;
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "interrupted" });
    expect(ofKind(journal, "retry.scheduled")).toEqual([]);
    const tag = readFileSync(`${s.launches}.pid`, "utf8").trim();
    expect(tag).toMatch(/^harness-hang-/);
    await until("the tagged process to end", () => !processWithTag(tag), 5000);
  });

  it("counts an agent's non-zero exit and an invalid verdict as failed attempts", async () => {
    const s = await makeScenario();
    const exitRun = await runScenario(s, scriptedConfig(s, "agent-exit"));
    expect(exitRun.outcome.status).toBe("completed");
    expect(ofKind(exitRun.journal, "retry.scheduled").map((event) => event.failureClass)).toEqual(["agent-exit"]);

    const t = await makeScenario();
    const verdictRun = await runScenario(t, scriptedConfig(t, "bad-verdict"));
    expect(verdictRun.outcome.status).toBe("completed");
    const retry = ofKind(verdictRun.journal, "retry.scheduled")[0];
    expect(retry).toMatchObject({ failureClass: "artifact-invalid" });
    expect(retry?.reason).toContain("$.verdict");

    const u = await makeScenario();
    const missing = scriptedConfig(u, "no-verdict");
    missing.maxAttempts = 1;
    const missingRun = await runScenario(u, missing);
    expect(missingRun.outcome.failureClass).toBe("retry-ceiling");
    expect(ofKind(missingRun.journal, "stage.finished").at(-1)).toMatchObject({ failureClass: "artifact-missing" });
  });

  it("lets the suite gate decide alone when no verifier agent is configured", async () => {
    const s = await makeScenario();
    const config = scriptedConfig(s, "no-verdict", { extra: "seats:\n  verifier:\n    enabled: false" });
    const { outcome, journal } = await runScenario(s, config);
    expect(outcome.status).toBe("completed");
    expect(launches(s)).toEqual(["implementer 1", "tester 1", "documenter 1"]);
    expect(ofKind(journal, "verdict.recorded")).toEqual([]);
    expect(ofKind(journal, "gate.finished")).toHaveLength(1);
  });

  it("hands agents the HARNESS_* variables and only the allowed environment", async () => {
    const s = await makeScenario();
    process.env.AGENT_TEST_KEY = "allowed-value";
    process.env.GITHUB_TOKEN = "never-passed";
    try {
      const config = scriptedConfig(s, "complete");
      config.agent.env = ["AGENT_TEST_KEY"];
      const { outcome } = await runScenario(s, config, { agentEnvAllow: ["AGENT_TEST_KEY", "OTHER"] });
      const env = readFileSync(join(outcome.runDir, "attempts", "1", "tester", "artifacts", "env.txt"), "utf8");
      expect(env).toContain("AGENT_TEST_KEY=allowed-value");
      expect(env).toContain("HARNESS_STAGE=tester");
      expect(env).toContain("HARNESS_ATTEMPT=1");
      expect(env).toMatch(/^HARNESS_TASK=task-\S+$/m);
      expect(env).toContain(`HARNESS_PROMPT_FILE=${join(outcome.runDir, "attempts", "1", "tester", "prompt.md")}`);
      expect(env).toContain(`HARNESS_ARTIFACT_DIR=${join(outcome.runDir, "attempts", "1", "tester", "artifacts")}`);
      expect(env).not.toContain("GITHUB_TOKEN");
    } finally {
      delete process.env.AGENT_TEST_KEY;
      delete process.env.GITHUB_TOKEN;
    }
  });

  it("blocks as config-invalid, before any worktree, when the repository asks for an environment the operator refuses", async () => {
    const s = await makeScenario();
    const config = scriptedConfig(s, "complete");
    config.agent.env = ["AWS_SECRET_ACCESS_KEY"];
    const { outcome, journal } = await runScenario(s, config, { agentEnvAllow: ["ANTHROPIC_API_KEY"] });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "config-invalid" });
    expect(outcome.detail).toContain("$.agent.env[0]");
    expect(kinds(journal)).toEqual(["run.started", "story.blocked"]);
    expect(launches(s)).toEqual([]);
    expect(await git(["branch", "--list", "harness/*"], { cwd: s.repo })).toBe("");
  });

  it("ignores a reporter that fails and still journals every step", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "complete"), {
      reporter: { onEvent: async () => Promise.reject(new Error("reporter down")) },
    });
    expect(outcome.status).toBe("completed");
    expect(kinds(journal).at(-1)).toBe("story.completed");
    expect(readFileSync(join(outcome.runDir, "logs", "reporter.log"), "utf8")).toContain("reporter down");
  });

  it("blocks as config-invalid at preflight, before a worktree exists or an agent is launched", async () => {
    const s = await makeScenario();
    const config = scriptedConfig(s, "complete", { extra: "seats:\n  verifer:\n    timeout_minutes: 5" });
    const { outcome, journal } = await runScenario(s, config, { configSource: ".github/harness.yml" });
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "config-invalid" });
    expect(outcome.detail).toContain(".github/harness.yml: $.seats.verifer names no seat of workflow 'story'");
    expect(outcome.detail).toContain("did you mean 'verifier'?");
    expect(kinds(journal)).toEqual(["run.started", "story.blocked"]);
    expect(launches(s)).toEqual([]);
  });
});
