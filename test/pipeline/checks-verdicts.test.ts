/**
 * The verdicts of the deterministic checks, one call at a time (src/pipeline/checks.ts): what
 * the suite gate makes of a suite that passes, fails, hangs, dies on a signal or cannot start;
 * which artifact problem a judging stage reports; what the clean-clone check is asked and what
 * it records. Real suites in the real sandbox, in a real repository; no story around them.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { exec } from "../../src/exec/index.js";
import { join } from "node:path";
import { checkArtifacts, MAX_ARTIFACT_BYTES, readArtifact, runCleanClone, runSuiteGate } from "../../src/pipeline/checks.js";
import type { Stage } from "../../src/pipeline/index.js";
import { runCleanCloneCheck, type CleanCloneOptions } from "../../src/workspace/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { makeTask, sandboxOf } from "./task-run.js";

afterAll(removeTempDirs);

const gateStage: Stage = { id: "check", kind: "gate", artifacts: [], gate: "suite" };
const yaml = (test: string, extra = ""): string => `test:\n  command: ${JSON.stringify(test)}\nprovision:\n  command: "true"\n${extra}`;

describe("runSuiteGate", () => {
  it("passes a suite that exits 0, run in the worktree it may write, logged and journaled", async () => {
    const command = "echo gate-ran > ran.txt && echo all green";
    const { task, journal } = await makeTask({ yaml: yaml(command) });
    expect(await runSuiteGate(task, gateStage, 2, command)).toBeUndefined();
    // It ran in the worktree, and the sandbox let it write there.
    expect(readFileSync(join(task.worktree.path, "ran.txt"), "utf8")).toBe("gate-ran\n");
    expect(readFileSync(join(task.layout.stageDir(2, "check"), "suite.log"), "utf8")).toContain("all green");
    expect(task.lastSuite).toEqual({ command, timedOut: false, outputTail: expect.stringContaining("all green"), exitCode: 0 });
    const events = journal();
    expect(events).toEqual([
      {
        kind: "gate.finished",
        taskId: "task-demo",
        stage: "check",
        attempt: 2,
        command,
        timedOut: false,
        outputTail: task.lastSuite?.outputTail,
        durationMs: expect.any(Number),
        policy: { sandboxed: true, network: false },
        logPath: join(task.layout.stageDir(2, "check"), "suite.log"),
        exitCode: 0,
        at: expect.any(String),
      },
    ]);
  });

  it("gives the suite the network only when the repository opts in", async () => {
    const { task, journal } = await makeTask({ yaml: yaml("true", "") });
    task.config.test.network = true;
    expect(await runSuiteGate(task, gateStage, 1, "true")).toBeUndefined();
    // The network policy it ran under is journaled with it (a namespace of its own, or the host's).
    const net = task.sandbox.netPolicyOf(true);
    expect(net).not.toBe("none");
    expect(journal()[0]).toMatchObject({ kind: "gate.finished", policy: { sandboxed: true, network: true, net } });
  });

  it("fails a suite that exits non-zero, naming the command and the code", async () => {
    const command = "echo one failure; exit 3";
    const { task, journal } = await makeTask({ yaml: yaml(command) });
    expect(await runSuiteGate(task, gateStage, 1, command)).toEqual({ failureClass: "suite-failed", reason: "test suite `echo one failure; exit 3` exited 3" });
    expect(task.lastSuite).toEqual({ command, timedOut: false, outputTail: expect.stringContaining("one failure"), exitCode: 3 });
    expect(journal()[0]).toMatchObject({ kind: "gate.finished", exitCode: 3, timedOut: false });
  });

  it("blocks, without a retry, a suite whose command cannot start (exit 127), naming its last line", async () => {
    const command = "no-such-test-runner --all";
    const { task } = await makeTask({ yaml: yaml(command) });
    const failure = await runSuiteGate(task, gateStage, 1, command);
    expect(failure).toMatchObject({ failureClass: "environment", infrastructure: true });
    expect(failure?.reason).toMatch(
      /^the test command `no-such-test-runner --all` cannot start \(exit 127: .*not found\); another attempt would fail the same way$/,
    );
  });

  it("fails a suite that runs out of time even when it then exits 0", async () => {
    // The row: a gate that times out must never count as a pass.
    const command = "trap 'exit 0' TERM; sleep 600 & wait";
    const { task, journal } = await makeTask({ yaml: yaml(command) });
    task.config.test.timeoutMs = 1000;
    expect(await runSuiteGate(task, gateStage, 1, command)).toEqual({
      failureClass: "suite-failed",
      reason: `test suite \`${command}\` timed out after 1000 ms`,
    });
    expect(task.lastSuite).toMatchObject({ command, timedOut: true });
    expect(journal()[0]).toMatchObject({ kind: "gate.finished", timedOut: true });
  });

  it("names the signal that ended a suite, and records no exit code for it", async () => {
    // Unsandboxed, the suite's shell is exec's own child, so its signal is what exec reports.
    const command = "kill -KILL $$";
    const { task, journal, reported } = await makeTask({ yaml: yaml(command), sandbox: sandboxOf(false) });
    expect(await runSuiteGate(task, gateStage, 1, command)).toEqual({ failureClass: "suite-failed", reason: "test suite `kill -KILL $$` exited on SIGKILL" });
    expect(task.lastSuite).toEqual({ command, timedOut: false, outputTail: expect.any(String) });
    // Absent, not present as undefined.
    expect(Object.keys(task.lastSuite ?? {})).not.toContain("exitCode");
    const event = journal()[0];
    expect(event).toMatchObject({ kind: "gate.finished", policy: { sandboxed: false, network: true } });
    expect(event).not.toHaveProperty("exitCode");
    // The reporter is handed the event itself, not the journal's JSON of it: no key there either.
    expect(Object.keys(reported[0] ?? {})).not.toContain("exitCode");
  });

  it("says why a suite could not start", async () => {
    const { task } = await makeTask({ sandbox: sandboxOf(false) });
    task.worktree = { ...task.worktree, path: join(task.worktree.path, "gone") };
    const failure = await runSuiteGate(task, gateStage, 1, "true");
    expect(failure?.failureClass).toBe("suite-failed");
    expect(failure?.reason).toMatch(/^test suite `true` .*ENOENT/);
    expect(failure?.reason).not.toContain("exited");
  });

  it("ends the suite when the task is stopped", async () => {
    const controller = new AbortController();
    controller.abort();
    const { task } = await makeTask({ signal: controller.signal });
    // Without the task's signal this suite would pass.
    const failure = await runSuiteGate(task, gateStage, 1, "true");
    expect(failure?.failureClass).toBe("suite-failed");
    expect(failure?.reason).toBe("test suite `true` was stopped before it finished");
    expect(task.lastSuite).toEqual({ command: "true", timedOut: false, outputTail: "" });
  });

  it("blocks as the base's failure when the base is red the same way, and not otherwise", async () => {
    const command = "echo 'FAIL legacy.test.js'; exit 1";
    const { task } = await makeTask({ yaml: yaml(command) });
    task.baseline = { command, commit: task.worktree.base, exitCode: 1, timedOut: false, outputTail: "FAIL legacy.test.js", durationMs: 5 };
    const failure = await runSuiteGate(task, gateStage, 1, command);
    expect(failure).toEqual({ failureClass: "baseline-red", reason: expect.stringContaining("fails the same way on the base commit"), infrastructure: true });

    task.baseline = { ...task.baseline, outputTail: "FAIL other.test.js" };
    expect(await runSuiteGate(task, gateStage, 1, command)).toEqual({ failureClass: "suite-failed", reason: `test suite \`${command}\` exited 1` });
  });
});

describe("checkArtifacts", () => {
  const stage: Stage = {
    id: "verify",
    kind: "seat",
    seat: "verifier",
    artifacts: [
      { name: "a.json", schema: "verdict" },
      { name: "b.json", schema: "verdict" },
    ],
  };
  const dirWith = (files: Record<string, string>): string => {
    const dir = makeTempDir("harness-artifacts-");
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };
  const good = JSON.stringify({ verdict: "pass", findings: [] });

  it("passes when every declared artifact is there and valid, and when none is declared", async () => {
    expect(await checkArtifacts(stage, dirWith({ "a.json": good, "b.json": good }))).toBeUndefined();
    expect(await checkArtifacts({ ...stage, artifacts: [] }, dirWith({}))).toBeUndefined();
  });

  it("reports the first artifact missing, naming the seat, or the stage when it has none", async () => {
    expect(await checkArtifacts(stage, dirWith({}))).toEqual({
      failureClass: "artifact-missing",
      reason: "the verifier left no a.json in its artifact directory",
    });
    expect(await checkArtifacts(stage, dirWith({ "a.json": good }))).toEqual({
      failureClass: "artifact-missing",
      reason: "the verifier left no b.json in its artifact directory",
    });
    const { seat: _none, ...unseated } = stage;
    expect(await checkArtifacts(unseated, dirWith({ "a.json": good }))).toEqual({
      failureClass: "artifact-missing",
      reason: "the verify left no b.json in its artifact directory",
    });
  });

  it("reports an artifact that is not JSON, or not what its schema says, with every issue", async () => {
    expect(await checkArtifacts(stage, dirWith({ "a.json": good, "b.json": "{ not json" }))).toEqual({
      failureClass: "artifact-invalid",
      reason: "b.json is not valid JSON",
    });
    const wrong = JSON.stringify({ verdict: "maybe" });
    expect(await checkArtifacts(stage, dirWith({ "a.json": wrong, "b.json": good }))).toEqual({
      failureClass: "artifact-invalid",
      reason: 'a.json: $ must have required key \'findings\'; $.verdict must be one of "pass", "fail"',
    });
  });
});

describe("checkArtifacts against an agent's hostile artifacts", () => {
  const stage: Stage = { id: "verify", kind: "seat", seat: "verifier", artifacts: [{ name: "verdict.json", schema: "verdict" }] };

  it("refuses a verdict.json that is a 1.5 GiB sparse file by its size, without reading it", async () => {
    const dir = makeTempDir("harness-artifacts-");
    writeFileSync(join(dir, "verdict.json"), "");
    truncateSync(join(dir, "verdict.json"), 1.5 * 1024 ** 3);
    const before = process.memoryUsage().arrayBuffers;
    expect(await checkArtifacts(stage, dir)).toEqual({
      failureClass: "artifact-invalid",
      reason: `verdict.json is larger than ${MAX_ARTIFACT_BYTES} bytes (${1.5 * 1024 ** 3})`,
    });
    expect(await readArtifact(join(dir, "verdict.json"))).toBeUndefined();
    // Reading it would have allocated 1.5 GiB.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 * 1024);
  });

  it("refuses a verdict.json that is a symlink to a file outside holding a secret, and says nothing of it", async () => {
    const root = makeTempDir("harness-artifacts-");
    const dir = join(root, "artifacts");
    mkdirSync(dir);
    // A secret that happens to parse as a passing verdict: followed, it would pass the story.
    writeFileSync(join(root, "app-secret.json"), JSON.stringify({ verdict: "pass", findings: ["PRIVATE KEY"] }));
    symlinkSync(join(root, "app-secret.json"), join(dir, "verdict.json"));
    const failure = await checkArtifacts(stage, dir);
    expect(failure).toEqual({ failureClass: "artifact-invalid", reason: "verdict.json is a symlink, which is not followed" });
    expect(await readArtifact(join(dir, "verdict.json"))).toBeUndefined();
    // A symlinked folder in the artifact folder leads nowhere either.
    symlinkSync(root, join(dir, "up"));
    expect(await checkArtifacts({ ...stage, artifacts: [{ name: "up/app-secret.json", schema: "verdict" }] }, dir)).toEqual({
      failureClass: "artifact-invalid",
      reason: "up/app-secret.json lies outside its folder through a symlinked parent",
    });
  });

  it("refuses a verdict.json that is a FIFO at once (nothing ever writes to it)", async () => {
    const dir = makeTempDir("harness-artifacts-");
    expect((await exec(["mkfifo", join(dir, "verdict.json")], { cwd: dir })).exitCode).toBe(0);
    expect(await checkArtifacts(stage, dir)).toEqual({ failureClass: "artifact-invalid", reason: "verdict.json is not a regular file" });
    expect(await readArtifact(join(dir, "verdict.json"))).toBeUndefined();
  });
});

describe("readArtifact", () => {
  it("parses JSON, and answers undefined for text that is not JSON or a file that is not there", async () => {
    const dir = makeTempDir("harness-artifact-");
    writeFileSync(join(dir, "ok.json"), '{"n":1}');
    writeFileSync(join(dir, "bad.json"), "n=1");
    expect(await readArtifact(join(dir, "ok.json"))).toEqual({ n: 1 });
    expect(await readArtifact(join(dir, "bad.json"))).toBeUndefined();
    expect(await readArtifact(join(dir, "none.json"))).toBeUndefined();
  });
});

describe("runCleanClone", () => {
  /** The real check, with what it was asked recorded. */
  function recorded(): { asked: CleanCloneOptions[]; run: typeof runCleanCloneCheck } {
    const asked: CleanCloneOptions[] = [];
    return {
      asked,
      run: async (options) => {
        asked.push(options);
        return runCleanCloneCheck(options);
      },
    };
  }

  it("asks for the suite in a clone of the worktree with no optional settings, and writes, journals and returns the record", async () => {
    const check = recorded();
    const command = "test -f feature.txt";
    const { task, journal } = await makeTask({ yaml: yaml(command), deps: { runCleanCloneCheck: check.run } });
    writeFileSync(join(task.worktree.path, "feature.txt"), "hello\n");
    const record = await runCleanClone(task, { id: "fresh" }, 2, "fresh.json", command);

    const attemptDir = task.layout.attemptDir(2);
    expect(check.asked).toEqual([
      {
        repo: task.worktree.path,
        command,
        timeoutMs: task.config.test.timeoutMs,
        logPath: join(attemptDir, "clean-clone.log"),
        sandbox: task.sandbox,
        network: false,
        // Should the repository declare workspaces, the clone is provisioned as the worktree was.
        provisionWorkspaces: { config: { command: "true" }, harnessHome: task.harnessHome },
      },
    ]);
    expect(record).toMatchObject({ ran: true, exitCode: 0 });
    expect(existsSync(join(attemptDir, "clean-clone.log"))).toBe(true);
    const written = JSON.parse(readFileSync(join(attemptDir, "fresh.json"), "utf8")) as unknown;
    expect(record).toEqual(written);
    expect(journal()).toEqual([
      {
        kind: "clean_clone.finished",
        taskId: "task-demo",
        stage: "fresh",
        attempt: 2,
        artifact: "fresh.json",
        result: written,
        policy: { sandboxed: true, network: false },
        logPath: join(attemptDir, "clean-clone.log"),
        at: expect.any(String),
      },
    ]);
  });

  it("hands the check every clean_clone setting of the repository, and the network when the repository opts in", async () => {
    const check = recorded();
    const extra = [
      "clean_clone:",
      "  link: [vendor]",
      `  interpreter: ${JSON.stringify(process.execPath)}`,
      "  depth: 1",
      "  env: [SOME_SETTING]",
      "  provision: true",
      "  allow_external_symlinks: true",
      "test:",
    ].join("\n");
    const { task, journal } = await makeTask({
      yaml: `provision:\n  command: "true"\n${extra}\n  command: "true"\n  network: true\n`,
      deps: { runCleanCloneCheck: check.run },
    });
    const record = await runCleanClone(task, { id: "fresh" }, 1, "clean.json", "true");
    expect(check.asked).toEqual([
      {
        repo: task.worktree.path,
        command: "true",
        links: ["vendor"],
        timeoutMs: task.config.test.timeoutMs,
        logPath: join(task.layout.attemptDir(1), "clean-clone.log"),
        interpreter: process.execPath,
        sandbox: task.sandbox,
        network: true,
        depth: 1,
        env: { allow: ["SOME_SETTING"] },
        provision: { config: { command: "true" }, harnessHome: task.harnessHome },
        allowExternalSymlinks: true,
      },
    ]);
    expect(record).toMatchObject({ ran: true, exitCode: 0, depth: 1, provisioned: true });
    expect(journal()[0]).toMatchObject({ kind: "clean_clone.finished", policy: { sandboxed: true, network: true, net: task.sandbox.netPolicyOf(true) } });
  });

  it("asks for neither provisioning nor outside links when they are turned off, and records an unsandboxed check as having the network", async () => {
    const check = recorded();
    const extra = "clean_clone:\n  provision: false\n  allow_external_symlinks: false\n";
    const { task, journal } = await makeTask({ yaml: yaml("true", extra), sandbox: sandboxOf(false), deps: { runCleanCloneCheck: check.run } });
    await runCleanClone(task, { id: "fresh" }, 1, "clean.json", "true");
    expect(Object.keys(check.asked[0] ?? {}).sort()).toEqual(["command", "logPath", "network", "repo", "sandbox", "timeoutMs"]);
    expect(journal()[0]).toMatchObject({ kind: "clean_clone.finished", policy: { sandboxed: false, network: true, net: task.sandbox.netPolicyOf(true) } });
  });
});
