/**
 * The suite's run in the clean clone, on a plain folder standing in for a built clone (no git
 * needed): what the sandboxed step may read and write, the suite's environment and PATH, how
 * its end becomes a result (exit code, signal, timeout, a start that failed, bounded tail and
 * the full log), and what the result says about the interpreter the command invokes.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Sandbox, sandboxSettingsFromEnv, sandboxFromEnv } from "../../src/sandbox/index.js";
import type { BuiltCleanClone, CleanCloneOptions } from "../../src/workspace/index.js";
import { CLEAN_CLONE_TAIL_BYTES, CLEAN_CLONE_TAIL_LINES } from "../../src/workspace/index.js";
import { cloneStep, runSuite, suiteEnvSet } from "../../src/workspace/clean-clone/run-suite.js";
import { launchInClone } from "../../src/workspace/clean-clone/suite.js";
import { describeInvoked } from "../../src/workspace/clean-clone/truth.js";
import { removeTemps, temp, write } from "./clean-clone-fixtures.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const operatorSandbox = sandboxFromEnv();

afterAll(removeTemps);

const COMMIT = "c".repeat(40);

/** A folder standing in for a built clone (its suite folder `pkg/`), and a target beside it. */
function fakeClone(): BuiltCleanClone {
  const cloneDir = temp("cc-fake-clone-");
  const targetTop = temp("cc-fake-target-");
  write(cloneDir, { "pkg/.keep": "" });
  write(targetTop, { "shared.txt": "from the target\n" });
  return { cloneDir, workDir: join(cloneDir, "pkg"), commit: COMMIT, tree: "t".repeat(40), base: "b".repeat(40), targetTop, linked: [], warnings: [] };
}

const options = (extra: Partial<CleanCloneOptions> = {}): CleanCloneOptions => ({ sandbox: operatorSandbox, repo: "/unused", command: "true", ...extra });
const script = (body: string) => ({ content: `#!/bin/sh\n${body}\n`, mode: 0o755 });

/** A fake interpreter at `<prefix>/bin/<name>`, outside every folder the step otherwise sees. */
function fakeInterpreter(name: string, version: string): string {
  const prefix = temp("cc-prefix-");
  write(prefix, { [`bin/${name}`]: script(`if [ "$1" = --version ]; then echo "${version}"; fi`) });
  return join(prefix, "bin", name);
}

describe("the suite's environment", () => {
  it("sets CI=true unless the caller sets CI, and puts a targeted interpreter's folder first on PATH", () => {
    expect(suiteEnvSet(options(), undefined)).toEqual({ CI: "true" });
    expect(suiteEnvSet(options({ env: { set: { CI: "false", X: "1" } } }), undefined)).toEqual({ CI: "false", X: "1" });
    expect(suiteEnvSet(options({ env: { set: { PATH: "/a:/b" } } }), "/opt/py/bin/python")).toEqual({ CI: "true", PATH: "/opt/py/bin:/a:/b" });
    expect(suiteEnvSet(options(), "/opt/py/bin/python").PATH).toBe(`/opt/py/bin:${process.env.PATH ?? ""}`);
  });

  it("describes the sandboxed step: the clone, the target, the network and the interpreter", () => {
    const clone = fakeClone();
    const box = new Sandbox(sandboxSettingsFromEnv({}));
    expect(cloneStep(options(), clone, undefined)).toStrictEqual({ cloneDir: clone.cloneDir, targetTop: clone.targetTop, sandbox: operatorSandbox });
    expect(cloneStep(options({ sandbox: box, network: false, interpreterFromOperator: true }), clone, "/opt/py/bin/python")).toEqual({
      cloneDir: clone.cloneDir,
      targetTop: clone.targetTop,
      sandbox: box,
      network: false,
      interpreter: "/opt/py/bin/python",
    });
    // One the repository names is not the operator's to show: its installation is not made readable.
    expect(cloneStep(options({ sandbox: box, network: false }), clone, "/opt/py/bin/python")).toEqual({
      cloneDir: clone.cloneDir,
      targetTop: clone.targetTop,
      sandbox: box,
      network: false,
    });
  });
});

describe("launchInClone", () => {
  it("writes only the clone, reads the target and the interpreter's installation, and has no network unless asked", async () => {
    const clone = fakeClone();
    const interpreter = fakeInterpreter("python3.99", "Python 3.99.0");
    const unseen = temp("cc-unseen-");
    write(unseen, { "secret.txt": "never visible\n" });
    const command = [
      "echo made > ../made.txt && cat ../made.txt",
      `cat ${clone.targetTop}/shared.txt`,
      `(echo x > ${clone.targetTop}/written.txt) 2>/dev/null || echo target-read-only`,
      `${interpreter} --version`,
      `cat ${unseen}/secret.txt 2>/dev/null || echo unseen-hidden`,
    ].join("; ");
    const step = { cloneDir: clone.cloneDir, targetTop: clone.targetTop, interpreter, sandbox: operatorSandbox };
    const result = await launchInClone(["/bin/sh", "-c", command], { cwd: clone.workDir, timeoutMs: 60_000 }, step);
    expect(result.tail).toBe("made\nfrom the target\ntarget-read-only\nPython 3.99.0\nunseen-hidden");
    expect(result).toMatchObject({ exitCode: 0, sandboxed: true, network: false });
    expect(readFileSync(join(clone.cloneDir, "made.txt"), "utf8")).toBe("made\n");
    // Without the interpreter named, its installation is out of view.
    const hidden = await launchInClone(
      ["/bin/sh", "-c", `test -e ${interpreter} || echo no-interpreter`],
      { cwd: clone.workDir, timeoutMs: 60_000 },
      { sandbox: operatorSandbox, cloneDir: clone.cloneDir, targetTop: clone.targetTop },
    );
    expect(hidden.tail).toBe("no-interpreter");
    const online = await launchInClone(["/bin/sh", "-c", "true"], { cwd: clone.workDir, timeoutMs: 60_000 }, { ...step, network: true });
    expect(online.network).toBe(true);
  });
});

describe("runSuite", () => {
  it("runs the command in the clone's suite folder with the suite's environment, and records the commit", async () => {
    const clone = fakeClone();
    process.env.CC_SUITE_ALLOWED = "allowed";
    process.env.CC_SUITE_OTHER = "other";
    try {
      const result = await runSuite(
        options({
          command: 'echo "$PWD $CI ${CC_SUITE_ALLOWED:-none} ${CC_SUITE_OTHER:-none} $GIVEN"',
          env: { allow: ["CC_SUITE_ALLOWED"], set: { GIVEN: "given" } },
        }),
        clone,
        undefined,
        60_000,
      );
      expect(result).toEqual({ ran: true, exitCode: 0, commit: COMMIT, outputTail: `${clone.workDir} true allowed none given` });
    } finally {
      delete process.env.CC_SUITE_ALLOWED;
      delete process.env.CC_SUITE_OTHER;
    }
  });

  it("puts the targeted interpreter first on PATH even when the caller's PATH is set", async () => {
    const clone = fakeClone();
    const interpreter = fakeInterpreter("python3.99", "Python 3.99.0");
    const result = await runSuite(
      options({ command: "command -v python3.99; python3.99 --version", env: { set: { PATH: "/usr/bin:/bin" } }, interpreterFromOperator: true }),
      clone,
      interpreter,
      60_000,
    );
    expect(result).toMatchObject({ ran: true, exitCode: 0, outputTail: `${interpreter}\nPython 3.99.0` });
  });

  it("records a failing exit code, and a signal as 128 plus its number", async () => {
    const clone = fakeClone();
    expect(await runSuite(options({ command: "echo failing; exit 3" }), clone, undefined, 60_000)).toEqual({
      ran: true,
      exitCode: 3,
      commit: COMMIT,
      outputTail: "failing",
    });
    const killed = await runSuite(options({ command: "kill -TERM $$" }), clone, undefined, 60_000);
    expect(killed).toMatchObject({ ran: true, exitCode: 143 });
    // Unsandboxed, the shell itself is what the signal ends: no exit code, a signal.
    const off = new Sandbox({ ...sandboxSettingsFromEnv({}), enabled: false });
    expect(await runSuite(options({ command: "kill -TERM $$", sandbox: off }), clone, undefined, 60_000)).toMatchObject({ ran: true, exitCode: 143 });
    expect(await runSuite(options({ command: "kill -KILL $$", sandbox: off }), clone, undefined, 60_000)).toMatchObject({ ran: true, exitCode: 137 });
  });

  it("is a run that failed without an exit code when it runs out of time, the caller's limit or the default", async () => {
    const clone = fakeClone();
    expect(await runSuite(options({ command: "echo started; sleep 600", timeoutMs: 1000 }), clone, undefined, 600_000)).toEqual({
      ran: true,
      timedOut: true,
      commit: COMMIT,
      outputTail: "started",
    });
    expect(await runSuite(options({ command: "sleep 600" }), clone, undefined, 1000)).toMatchObject({ ran: true, timedOut: true });
  });

  it("did not run when the suite cannot be started", async () => {
    const clone = fakeClone();
    const off = new Sandbox({ ...sandboxSettingsFromEnv({}), enabled: false });
    const result = await runSuite(options({ sandbox: off }), { ...clone, workDir: join(clone.cloneDir, "missing") }, undefined, 60_000);
    expect(result).toMatchObject({ ran: false, commit: COMMIT });
    expect(result.reason).toMatch(/^the suite could not be started: .*ENOENT/);
    expect(result.exitCode).toBeUndefined();
  });

  it("keeps the last lines and bytes of the output, and appends all of it to the log", async () => {
    const clone = fakeClone();
    const logPath = join(temp("cc-log-"), "suite.log");
    writeFileSync(logPath, "earlier\n");
    const lines = await runSuite(options({ command: "seq 1 200", logPath }), clone, undefined, 60_000);
    const expected = Array.from({ length: CLEAN_CLONE_TAIL_LINES }, (_, index) => String(200 - CLEAN_CLONE_TAIL_LINES + 1 + index)).join("\n");
    expect(lines.outputTail).toBe(expected);
    expect(readFileSync(logPath, "utf8")).toBe(`earlier\n${Array.from({ length: 200 }, (_, index) => index + 1).join("\n")}\n`);
    const wide = await runSuite(options({ command: "for i in 1 2 3 4 5 6; do head -c 5000 /dev/zero | tr '\\0' x; echo; done" }), clone, undefined, 60_000);
    expect(Buffer.byteLength(wide.outputTail ?? "")).toBeLessThanOrEqual(CLEAN_CLONE_TAIL_BYTES);
    expect(Buffer.byteLength(wide.outputTail ?? "")).toBeGreaterThan(CLEAN_CLONE_TAIL_BYTES - 5002);
  });
});

describe("describeInvoked", () => {
  it("adds nothing when the command's program is unknown and nothing is targeted, keeping earlier warnings", async () => {
    const clone = fakeClone();
    expect(await describeInvoked(options({ command: "make test" }), clone, undefined, { warnings: ["earlier"] })).toEqual({ warnings: ["earlier"] });
    expect(await describeInvoked(options({ command: "make test" }), clone, undefined, {})).toEqual({ warnings: [] });
  });

  it("warns that the targeted interpreter's version is all it knows when the command's program is unknown", async () => {
    const clone = fakeClone();
    const described = await describeInvoked(options({ command: "make test" }), clone, "/opt/py/bin/python3", { warnings: ["earlier"] });
    expect(described).toEqual({
      warnings: ["earlier", "could not tell which interpreter the command invokes; interpreterVersion is the targeted interpreter's (/opt/py/bin/python3)"],
    });
  });

  it("says nothing more when the command invokes the targeted interpreter itself, by path or on PATH", async () => {
    const clone = fakeClone();
    const interpreter = fakeInterpreter("python3.99", "Python 3.99.0");
    expect(await describeInvoked(options({ command: `${interpreter} -m pytest` }), clone, interpreter, {})).toEqual({ warnings: [] });
    expect(await describeInvoked(options({ command: "python3.99 -m pytest" }), clone, interpreter, {})).toEqual({ warnings: [] });
  });

  it("records what the command invokes when nothing is targeted, named inside the clone relative to the suite folder", async () => {
    const clone = fakeClone();
    write(clone.workDir, { ".venv/bin/python": script('[ "$1" = --version ] || exit 2; echo "   Python 3.13.1"'), ".venv/bin/python3": script("exit 4") });
    expect(await describeInvoked(options({ command: ".venv/bin/python -m pytest" }), clone, undefined, {})).toEqual({
      interpreter: ".venv/bin/python",
      interpreterVersion: "Python 3.13.1",
      warnings: [],
    });
    expect(await describeInvoked(options({ command: ".venv/bin/python3 -m pytest" }), clone, undefined, {})).toEqual({
      interpreter: ".venv/bin/python3",
      warnings: ["could not ask .venv/bin/python3 its version"],
    });
    const outside = fakeInterpreter("node", "v99.0.0");
    const byPath = await describeInvoked(options({ command: "node test.js", env: { set: { PATH: dirname(outside) } } }), clone, undefined, {});
    // Found outside the clone it is named by its absolute path; outside the step's view, it cannot be asked.
    expect(byPath).toEqual({ interpreter: outside, warnings: [`could not ask ${outside} its version`] });
  });

  it("warns, naming both versions and how the command finds it, when the command invokes another interpreter than the targeted one", async () => {
    const clone = fakeClone();
    write(clone.workDir, { ".venv/bin/python": script('[ "$1" = --version ] || exit 2; echo "Python 3.13.1"'), "bin/python3.12": script("exit 1") });
    const targeted = fakeInterpreter("python3.10", "Python 3.10.13");
    const byPath = await describeInvoked(options({ command: ".venv/bin/python -m pytest" }), clone, targeted, { interpreterVersion: "Python 3.10.13" });
    expect(byPath).toEqual({
      interpreter: ".venv/bin/python",
      interpreterVersion: "Python 3.13.1",
      warnings: [
        `the command invokes .venv/bin/python (Python 3.13.1), not the targeted interpreter ${targeted} (Python 3.10.13): targeting puts ${dirname(targeted)} first on PATH, and the command names it by path`,
      ],
    });
    const onPath = await describeInvoked(options({ command: "python3.12 -m pytest", env: { set: { PATH: join(clone.workDir, "bin") } } }), clone, targeted, {});
    expect(onPath).toEqual({
      interpreter: "bin/python3.12",
      interpreterVersion: undefined,
      warnings: [
        `the command invokes bin/python3.12, not the targeted interpreter ${targeted} (version unknown): targeting puts ${dirname(targeted)} first on PATH, and the command finds it on PATH`,
      ],
    });
  });

  it("asks the version with the suite's environment: CI, what the caller sets and what it allows", async () => {
    const clone = fakeClone();
    write(clone.workDir, { ".venv/bin/python": script('echo "Python $CI ${CC_PROBE_ALLOWED:-none} ${CC_PROBE_OTHER:-none}"') });
    process.env.CC_PROBE_ALLOWED = "allowed";
    process.env.CC_PROBE_OTHER = "other";
    try {
      const described = await describeInvoked(options({ command: ".venv/bin/python -m pytest", env: { allow: ["CC_PROBE_ALLOWED"] } }), clone, undefined, {});
      expect(described).toEqual({ interpreter: ".venv/bin/python", interpreterVersion: "Python true allowed none", warnings: [] });
    } finally {
      delete process.env.CC_PROBE_ALLOWED;
      delete process.env.CC_PROBE_OTHER;
    }
  });

  it("keeps the last line of a version, trimmed and bounded, and takes silence for no version", async () => {
    const clone = fakeClone();
    write(clone.workDir, { python: script(`echo banner; echo "  ${"v".repeat(300)}  "`), node: script("exit 0") });
    expect(await describeInvoked(options({ command: "./python" }), clone, undefined, {})).toEqual({
      interpreter: "python",
      interpreterVersion: "v".repeat(256),
      warnings: [],
    });
    expect(await describeInvoked(options({ command: "./node" }), clone, undefined, {})).toEqual({
      interpreter: "node",
      warnings: ["could not ask node its version"],
    });
  });
});
