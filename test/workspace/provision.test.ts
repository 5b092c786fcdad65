import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { provisionWorktree, ProvisionConfigError, readReceipt, WorkspaceProvisionError, type ProvisionConfig } from "../../src/workspace/index.js";
import { Sandbox, sandboxSettingsFromEnv, sandboxFromEnv } from "../../src/sandbox/index.js";
import { makeTempDir, removeTempDirs, writeFiles, type FileSpec } from "../support/tmp.js";
import { fakePath, recorded, writeFakeTools } from "./provision-fakes.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const operatorSandbox = sandboxFromEnv();

afterAll(removeTempDirs);

/** A worktree with `files`, a record folder, fake tools first on PATH, and a fresh harness home. */
function setup(files: Record<string, FileSpec>) {
  const root = makeTempDir("harness-provision-");
  const worktree = join(root, "wt");
  const records = join(root, "records");
  const bin = join(root, "bin");
  mkdirSync(worktree);
  writeFiles(worktree, files);
  writeFiles(records, { ".keep": "" });
  writeFakeTools(bin);
  const env = { set: { PATH: fakePath(bin), RECORD_DIR: records } };
  // The real sandbox, granted the fake tools and the record folder the way an operator grants
  // an installed tool's folder (HARNESS_SANDBOX_READ / HARNESS_SANDBOX_WRITE).
  const sandbox = new Sandbox({ ...sandboxSettingsFromEnv({}), readPaths: [bin], writePaths: [records] });
  return { root, worktree, records, home: join(root, "home"), logPath: join(root, "logs", "provision.log"), env, sandbox };
}

const run = (s: ReturnType<typeof setup>, config: ProvisionConfig = {}) =>
  provisionWorktree({ worktree: s.worktree, config: { env: s.env, ...config }, taskId: "t1", logPath: s.logPath, harnessHome: s.home, sandbox: s.sandbox });

describe("provisionWorktree rungs", () => {
  it.each([
    ["pnpm", "pnpm-lock.yaml", ["install", "--frozen-lockfile", "--prefer-offline"]],
    ["npm", "package-lock.json", ["ci"]],
    ["yarn", "yarn.lock", ["install", "--frozen-lockfile"]],
  ])("%s runs with its exact argv from the worktree root, output only in the log", async (tool, lockfile, args) => {
    const s = setup({ [lockfile]: "" });
    const outcome = await run(s);
    const seen = recorded(s.records, tool);
    expect(seen.argv.slice(1)).toEqual(args);
    expect(seen.argv[0]).toBe(join(s.root, "bin", tool));
    expect(seen.cwd).toBe(s.worktree);
    expect(outcome).toMatchObject({ attempts: 1, skipped: false, receipt: { cmd: [tool, ...args].join(" "), exitCode: 0 } });
    expect(readFileSync(s.logPath, "utf8")).toContain(`${tool} ran`);
    expect(readReceipt(s.worktree)).toEqual(outcome.receipt);
  });

  it("passes the shared caches under the harness home, and no secret", async () => {
    const s = setup({ "package-lock.json": "{}" });
    // Every name asserted absent below is present in the harness's own environment.
    const planted = {
      GITHUB_TOKEN: "ghs_secret",
      PRIVATE_KEY: "-----BEGIN",
      WEBHOOK_SECRET: "hook",
      GH_TOKEN: "gh",
      HARNESS_UNASKED: "x",
      HARNESS_ASKED: "asked",
    };
    const saved = Object.fromEntries(Object.keys(planted).map((name) => [name, process.env[name]]));
    Object.assign(process.env, planted);
    try {
      await run(s, { env: { ...s.env, allow: ["GITHUB_TOKEN", "gh_token", "WEBHOOK_SECRET", "HARNESS_ASKED"] } });
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    const { env } = recorded(s.records, "npm");
    expect(env.npm_config_cache).toBe(join(s.home, "cache", "npm"));
    expect(env.PNPM_HOME).toBe(join(s.home, "cache", "pnpm"));
    expect(env.YARN_CACHE_FOLDER).toBe(join(s.home, "cache", "yarn"));
    expect(env.CARGO_HOME).toBe(join(s.home, "cache", "cargo"));
    expect(env.npm_config_prefer_offline).toBe("true");
    expect(existsSync(join(s.home, "cache", "npm"))).toBe(true);
    for (const name of ["GITHUB_TOKEN", "PRIVATE_KEY", "HARNESS_UNASKED", "WEBHOOK_SECRET", "GH_TOKEN"]) expect(env).not.toHaveProperty(name);
    // What the configuration allows does arrive.
    expect(env.HARNESS_ASKED).toBe("asked");
  });

  it("runs the config command through /bin/sh -lc from the worktree root", async () => {
    const s = setup({ "package-lock.json": "{}" });
    const outcome = await run(s, { command: 'echo "$0" > "$RECORD_DIR/shell"; pwd > "$RECORD_DIR/cwd"' });
    expect(readFileSync(join(s.records, "shell"), "utf8").trim()).toBe("/bin/sh");
    expect(readFileSync(join(s.records, "cwd"), "utf8").trim()).toBe(s.worktree);
    expect(existsSync(join(s.records, "npm.argv"))).toBe(false);
    expect(outcome.receipt.cmd).toBe('echo "$0" > "$RECORD_DIR/shell"; pwd > "$RECORD_DIR/cwd"');
  });

  it("runs an executable hook as itself from the worktree root", async () => {
    const s = setup({
      ".harness/provision.sh": { content: '#!/bin/sh\necho "$0" > "$RECORD_DIR/hook"; pwd >> "$RECORD_DIR/hook"\n', mode: 0o755 },
      "yarn.lock": "",
    });
    const outcome = await run(s);
    const hook = join(s.worktree, ".harness/provision.sh");
    expect(readFileSync(join(s.records, "hook"), "utf8")).toBe(`${hook}\n${s.worktree}\n`);
    expect(outcome.receipt.cmd).toBe(hook);
  });

  it.each([
    ["cargo", { "Cargo.toml": "[package]\n" }],
    ["none", { "README.md": "" }],
  ])("%s is a no-op that still writes a receipt", async (_rung, files) => {
    const s = setup(files);
    const at = new Date("2026-01-02T03:04:05.000Z");
    const outcome = await provisionWorktree({
      sandbox: operatorSandbox,
      worktree: s.worktree,
      taskId: "t",
      logPath: s.logPath,
      harnessHome: s.home,
      now: () => at,
    });
    expect(outcome).toMatchObject({ attempts: 0, skipped: false, receipt: { cmd: null, exitCode: 0, at: at.toISOString() } });
    expect(readFileSync(outcome.receiptPath, "utf8")).toBe(`${JSON.stringify(outcome.receipt)}\n`);
  });

  it("skips execution when a receipt exists", async () => {
    const s = setup({});
    const command = 'echo run >> "$RECORD_DIR/count"';
    const first = await run(s, { command });
    const second = await run(s, { command });
    expect(second).toMatchObject({ skipped: true, attempts: 0, receipt: first.receipt });
    expect(readFileSync(join(s.records, "count"), "utf8")).toBe("run\n");
  });
});

describe("provisionWorktree failures", () => {
  it("rejects a bad timeout or an empty command before anything runs", async () => {
    const s = setup({});
    const touch = 'touch "$RECORD_DIR/ran"';
    await expect(run(s, { command: touch, timeoutMs: 0 })).rejects.toBeInstanceOf(ProvisionConfigError);
    await expect(run(s, { command: touch, timeoutMs: 1.5 })).rejects.toThrow(/provision\.timeoutMs/);
    await expect(run(s, { command: "" })).rejects.toThrow(/provision\.command/);
    expect(existsSync(join(s.records, "ran"))).toBe(false);
    expect(existsSync(s.logPath)).toBe(false);
    expect(readReceipt(s.worktree)).toBeUndefined();
  });

  it("retries once with the same command and log, then throws with a bounded tail and no receipt", async () => {
    const s = setup({});
    const command = 'echo attempt >> "$RECORD_DIR/count"; i=0; while [ $i -lt 200 ]; do echo "line $i $(printf %0500d 0)"; i=$((i+1)); done; exit 3';
    const error = await run(s, { command }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkspaceProvisionError);
    const failure = error as WorkspaceProvisionError;
    expect(failure).toMatchObject({
      failureClass: "workspace-provision-failed",
      cmd: command,
      exitCode: 3,
      logPath: s.logPath,
      taskId: "t1",
      attempts: 2,
      timedOut: false,
    });
    expect(readFileSync(join(s.records, "count"), "utf8")).toBe("attempt\nattempt\n");
    const tailLines = failure.logTail.split("\n");
    expect(tailLines.length).toBeLessThanOrEqual(20);
    expect(Buffer.byteLength(failure.logTail)).toBeLessThanOrEqual(64 * 1024);
    expect(tailLines[tailLines.length - 1]).toMatch(/^line 199 /);
    const log = readFileSync(s.logPath, "utf8");
    expect(log.match(/^line 199 /gm)).toHaveLength(2);
    expect(log).toContain("attempt 1/2");
    expect(log).toContain("attempt 2/2");
    expect(existsSync(join(s.worktree, ".harness-provisioned"))).toBe(false);
  });

  it("keeps the lines that carry the error in the tail, not only the last lines (npm's cause on line 9 of 210)", async () => {
    const s = setup({});
    // npm writes all of it to stderr.
    const command = [
      "exec 1>&2",
      'i=0; while [ $i -lt 8 ]; do echo "npm http fetch GET 200 package $i"; i=$((i+1)); done',
      "echo 'npm error code EUSAGE' >&2",
      "echo 'npm error' >&2",
      "echo 'npm error `npm ci` can only install packages when your package.json and package-lock.json are in sync.' >&2",
      "echo 'npm error Missing: left-pad@1.3.0 from lock file' >&2",
      'i=0; while [ $i -lt 200 ]; do echo "npm error   --usage-option-$i"; i=$((i+1)); done',
      "exit 1",
    ].join("\n");
    const failure = (await run(s, { command }).catch((e: unknown) => e)) as WorkspaceProvisionError;
    expect(failure).toBeInstanceOf(WorkspaceProvisionError);
    const lines = failure.logTail.split("\n");
    expect(lines.length).toBeLessThanOrEqual(20);
    expect(failure.logTail).toContain("npm error Missing: left-pad@1.3.0 from lock file");
    expect(failure.logTail).toContain("npm error code EUSAGE");
    expect(lines.at(-1)).toBe("npm error   --usage-option-199");
    expect(failure.logTail).not.toContain("npm http fetch");
  });

  it("starts the retry only after every process of the first attempt is gone (sandbox off: exec's group wait)", async () => {
    const s = setup({});
    // Without the sandbox the leftover shares the App's pid namespace, so attempt 2 can look it up in /proc.
    const sandbox = new Sandbox({ ...sandboxSettingsFromEnv({ HARNESS_SANDBOX: "off" }) });
    // Attempt 1 leaves a SIGTERM-ignoring process behind and fails; attempt 2 succeeds only if it is dead.
    const command = [
      'if [ ! -f "$RECORD_DIR/first" ]; then',
      '  touch "$RECORD_DIR/first"; (trap "" TERM; exec sleep 600) >/dev/null 2>&1 & echo $! > "$RECORD_DIR/bg"; exit 1',
      "fi",
      'state=$(cut -d" " -f3 "/proc/$(cat "$RECORD_DIR/bg")/stat" 2>/dev/null)',
      'echo "leftover state: ${state:-gone}"',
      '[ -z "$state" ] || [ "$state" = Z ]',
    ].join("\n");
    const outcome = await run({ ...s, sandbox }, { command });
    expect(outcome.attempts).toBe(2);
    expect(readFileSync(s.logPath, "utf8")).toMatch(/leftover state: (gone|Z)/);
  });

  it("starts the retry only after every process of the first attempt is gone (sandboxed: seen through a lock it held)", async () => {
    const s = setup({});
    // Each attempt has its own pid namespace, so a pid means nothing across them: the leftover
    // holds a lock on a file both attempts see instead, which only its death releases.
    const command = [
      'if [ ! -f "$RECORD_DIR/first" ]; then',
      '  touch "$RECORD_DIR/first"',
      '  (trap "" TERM; exec flock "$RECORD_DIR/lock" sh -c \'touch "$RECORD_DIR/locked"; exec sleep 600\') >/dev/null 2>&1 &',
      '  while [ ! -f "$RECORD_DIR/locked" ]; do sleep 0.05; done; exit 1',
      "fi",
      'if flock -n "$RECORD_DIR/lock" true; then echo "lock: free"; else echo "lock: still held"; exit 1; fi',
    ].join("\n");
    const outcome = await run(s, { command });
    expect(outcome.attempts).toBe(2);
    expect(existsSync(join(s.records, "locked"))).toBe(true);
    expect(readFileSync(s.logPath, "utf8")).toContain("lock: free");
  });

  it("a timed-out attempt is retried with the same timeout, then fails as timed out", async () => {
    const s = setup({});
    // Long enough for the shell to record each attempt under load; the 600 s sleep outlives jest's deadline if never ended.
    const error = (await run(s, { command: 'echo go >> "$RECORD_DIR/count"; exec sleep 600', timeoutMs: 2500 }).catch(
      (e: unknown) => e,
    )) as WorkspaceProvisionError;
    expect(error).toBeInstanceOf(WorkspaceProvisionError);
    expect(error.timedOut).toBe(true);
    expect(error.exitCode).toBeNull();
    expect(readFileSync(join(s.records, "count"), "utf8")).toBe("go\ngo\n");
    expect(readFileSync(s.logPath, "utf8")).toContain("timed out after 2500 ms");
  });

  it("a retry that succeeds writes the receipt", async () => {
    const s = setup({});
    const command = 'if [ -f "$RECORD_DIR/once" ]; then exit 0; fi; touch "$RECORD_DIR/once"; echo flaky >&2; exit 1';
    const outcome = await run(s, { command });
    expect(outcome.attempts).toBe(2);
    expect(readReceipt(s.worktree)?.cmd).toBe(command);
  });

  it("a package manager that is not installed fails as provisioning, not as a crash", async () => {
    const s = setup({ "pnpm-lock.yaml": "" });
    const error = (await provisionWorktree({
      sandbox: operatorSandbox,
      worktree: s.worktree,
      config: { env: { set: { PATH: join(s.root, "empty-bin") } } },
      taskId: "t2",
      logPath: s.logPath,
      harnessHome: s.home,
    }).catch((e: unknown) => e)) as WorkspaceProvisionError;
    expect(error).toBeInstanceOf(WorkspaceProvisionError);
    expect(error.cmd).toBe("pnpm install --frozen-lockfile --prefer-offline");
    expect(error.logTail).toContain("could not start pnpm");
  });

  it("a log that cannot be written is a provisioning failure and nothing runs", async () => {
    const s = setup({});
    writeFiles(s.root, { "not-a-dir": "" });
    const error = (await provisionWorktree({
      sandbox: operatorSandbox,
      worktree: s.worktree,
      config: { command: 'touch "$RECORD_DIR/ran"', env: s.env },
      taskId: "t3",
      logPath: join(s.root, "not-a-dir", "provision.log"),
      harnessHome: s.home,
    }).catch((e: unknown) => e)) as WorkspaceProvisionError;
    expect(error).toBeInstanceOf(WorkspaceProvisionError);
    expect(error.message).toContain("cannot write the provisioning log");
    expect(existsSync(join(s.records, "ran"))).toBe(false);
  });

  it("a worktree that does not exist is a provisioning failure", async () => {
    const s = setup({});
    await expect(provisionWorktree({ sandbox: operatorSandbox, worktree: join(s.root, "missing"), taskId: "t", logPath: s.logPath })).rejects.toBeInstanceOf(
      WorkspaceProvisionError,
    );
  });
});

describe("WorkspaceProvisionError", () => {
  // Bounded where it is made, whatever the caller hands it: exec bounds its own tail already,
  // and this bound is what keeps every other caller's tail out of journals and comments.
  it("keeps only the last 20 lines and at most 64 KiB of any tail it is given", () => {
    const lines = Array.from({ length: 5_000 }, (_, i) => `line ${i} ${"错".repeat(i === 4_999 ? 30_000 : 10)}`);
    const error = new WorkspaceProvisionError("failed", { cmd: "npm ci", exitCode: 1, logPath: "p.log", logTail: lines.join("\n") });
    const kept = error.logTail.split("\n");
    expect(kept.length).toBeLessThanOrEqual(20);
    expect(Buffer.byteLength(error.logTail)).toBeLessThanOrEqual(64 * 1024);
    expect(Buffer.byteLength(error.logTail)).toBeGreaterThan(32 * 1024);
    expect(error.logTail.endsWith("错错错")).toBe(true);
    expect(error.logTail.includes("\uFFFD")).toBe(false);
    const short = new WorkspaceProvisionError("failed", {
      cmd: null,
      exitCode: null,
      logPath: "",
      logTail: Array.from({ length: 30 }, (_, i) => `l${i}`).join("\n"),
    });
    expect(short.logTail).toBe(Array.from({ length: 20 }, (_, i) => `l${i + 10}`).join("\n"));
  });
});
