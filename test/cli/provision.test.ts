import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exec, type ExecResult } from "../../src/exec/index.js";
import { git } from "../../src/workspace/index.js";
import { makeTempDir, removeTempDirs, writeFiles } from "../support/tmp.js";

const BIN = fileURLToPath(new URL("../../bin/harness.js", import.meta.url));

afterAll(removeTempDirs);

/** Runs the real `harness provision` as a child process with its own HARNESS_HOME. */
async function harness(args: string[], home: string, cwd: string): Promise<ExecResult & { out: string; err: string }> {
  const logs = makeTempDir("harness-cli-out-");
  const result = await exec(["sh", "-c", 'node "$0" "$@" >"$OUT" 2>"$ERR"', BIN, "provision", ...args], {
    cwd,
    env: { set: { HARNESS_HOME: home, OUT: join(logs, "out"), ERR: join(logs, "err") } },
    timeoutMs: 60_000,
  });
  return { ...result, out: readFileSync(join(logs, "out"), "utf8"), err: readFileSync(join(logs, "err"), "utf8") };
}

/** A git working tree (the harness provisions worktrees, never a plain folder) under a fresh root. */
async function fixture() {
  const root = makeTempDir("harness-cli-");
  const worktree = join(root, "wt");
  writeFiles(worktree, { "README.md": "x\n" });
  await git(["init", "-q"], { cwd: worktree });
  return { root, worktree, home: join(root, "home") };
}

describe("harness provision", () => {
  it("exit 0 prints exactly the receipt line; the command's output goes only to the log", async () => {
    const { root, worktree, home } = await fixture();
    const log = join(root, "p.log");
    const result = await harness(["wt", "--cmd", "echo to-stdout; echo to-stderr >&2", "--timeout-ms", "20000", "--log", log], home, root);
    expect(result.exitCode).toBe(0);
    expect(result.err).toBe("");
    expect(result.out).toBe(readFileSync(join(worktree, ".harness-provisioned"), "utf8"));
    expect(JSON.parse(result.out)).toMatchObject({ cmd: "echo to-stdout; echo to-stderr >&2", exitCode: 0 });
    expect(result.out.split("\n")).toHaveLength(2);
    expect(readFileSync(log, "utf8")).toMatch(/to-stdout\n(.|\n)*to-stderr/);
  });

  it("exit 3 names the failure class, command, exit code, log path and tail", async () => {
    const { root, worktree, home } = await fixture();
    const result = await harness([worktree, "--cmd", "echo boom-$((1+1)); exit 4"], home, root);
    expect(result.exitCode).toBe(3);
    expect(result.out).toBe("");
    const logs = readdirSync(join(home, "logs"));
    expect(logs).toHaveLength(1);
    const logPath = join(home, "logs", logs[0] ?? "");
    expect(logs[0]).toMatch(/^provision-wt-.*\.log$/);
    expect(result.err).toContain("workspace-provision-failed");
    expect(result.err).toContain("command:   echo boom-$((1+1)); exit 4");
    expect(result.err).toContain("exit code: 4");
    expect(result.err).toContain(`log:       ${logPath}`);
    expect(result.err).toContain("boom-2");
    expect(readFileSync(logPath, "utf8").match(/boom-2/g)).toHaveLength(2);
    expect(existsSync(join(worktree, ".harness-provisioned"))).toBe(false);
  });

  it.each([
    [[], /missing <worktree>/],
    [["wt", "--timeout-ms", "0"], /--timeout-ms must be a positive integer/],
    [["wt", "--timeout-ms", "1.5"], /--timeout-ms must be a positive integer/],
    [["wt", "--cmd", ""], /--provision-cmd must not be empty/],
    [["wt", "--provision-cmd", ""], /--provision-cmd must not be empty/],
    [["wt", "--provision-cmd", "true", "--cmd", "true"], /give --provision-cmd or its old name --cmd, not both/],
    [["wt", "--timeout", "5"], /Unknown option '--timeout'.*\(did you mean --timeout-ms\?\)/],
    [["wt", "--bogus"], /Unknown option '--bogus'/],
    [["nowhere"], /is not a directory/],
    [["plain"], /worktree .*plain is not a git working tree/],
    [["bare.git"], /worktree .*bare\.git is not a git working tree/],
  ])("exit 2 for %p with a one-line reason and usage, nothing runs", async (args, reason) => {
    const { root, worktree, home } = await fixture();
    writeFiles(worktree, { ".harness/provision.sh": { content: "#!/bin/sh\ntouch ran\n", mode: 0o755 } });
    writeFiles(join(root, "plain"), { "package.json": "{}\n" });
    await git(["init", "-q", "--bare", join(root, "bare.git")], { cwd: root });
    const result = await harness(args, home, root);
    for (const folder of ["plain", "bare.git"]) expect(existsSync(join(root, folder, ".harness-provisioned"))).toBe(false);
    expect(result.exitCode).toBe(2);
    const lines = result.err.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(reason);
    expect(lines[1]).toMatch(/^usage: harness provision <worktree>/);
    expect(existsSync(join(worktree, "ran"))).toBe(false);
    expect(existsSync(join(worktree, ".harness-provisioned"))).toBe(false);
    expect(existsSync(home)).toBe(false);
  });
});
