/**
 * provisionWorktree's own decisions, each on a real worktree with a fake npm (provision-project.ts:
 * it records its run and leaves a node_modules tree, installing nothing): linking a snapshot or
 * installing, why no snapshot is used (said in the log), how each failure is described, and the
 * exact errors.
 */
import { existsSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  assertProvisioned,
  provisionCacheEnv,
  provisionWorktree,
  PROVISION_RECEIPT,
  readReceipt,
  snapshotsDir,
  WorkspaceProvisionError,
} from "../../src/workspace/index.js";
import { Sandbox, sandboxSettingsFromEnv, sandboxFromEnv } from "../../src/sandbox/index.js";
import { makeTempDir, removeTempDirs, writeFiles } from "../support/tmp.js";
import { fakePath } from "./provision-fakes.js";
import { project, withPathFirst } from "./provision-project.js";
import { jest } from "@jest/globals";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const operatorSandbox = sandboxFromEnv();

jest.setTimeout(60_000);
afterAll(removeTempDirs);

const at = new Date("2026-03-04T05:06:07.000Z");

describe("provisionWorktree and dependency snapshots", () => {
  it("installs the first worktree and saves a snapshot; links the next from it, writing no log", async () => {
    const p = await project();
    const first = await p.provision(await p.worktree(), { now: () => at });
    const key = first.outcome.snapshot?.key ?? "";
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(first.outcome).toEqual({
      receiptPath: expect.stringMatching(/wt1\/\.harness-provisioned$/),
      receipt: { cmd: "npm ci", exitCode: 0, at: at.toISOString(), durationMs: expect.any(Number) },
      attempts: 1,
      skipped: false,
      source: "npm",
      snapshot: { key, action: "saved" },
    });
    expect(first.outcome.receipt.durationMs).toBeLessThanOrEqual(Math.ceil(first.took));

    const wt2 = await p.worktree();
    const second = await p.provision(wt2, { now: () => at });
    expect(second.outcome).toEqual({
      receiptPath: join(wt2, PROVISION_RECEIPT),
      receipt: { cmd: `npm ci (linked from snapshot ${key.slice(0, 12)})`, exitCode: 0, at: at.toISOString(), durationMs: expect.any(Number) },
      attempts: 0,
      skipped: false,
      source: "npm",
      snapshot: { key, action: "linked" },
    });
    expect(second.outcome.receipt.durationMs).toBeGreaterThanOrEqual(0);
    expect(second.outcome.receipt.durationMs).toBeLessThanOrEqual(Math.ceil(second.took));
    expect(readReceipt(wt2)).toEqual(second.outcome.receipt);
    expect(readFileSync(join(wt2, "node_modules", "left", "index.js"), "utf8")).toBe("module.exports = 1;\n");
    expect(p.runs()).toBe(1);
    expect(existsSync(second.logPath)).toBe(false);
  });

  it("installs instead when the snapshot cannot be linked, and says so in the log", async () => {
    const p = await project();
    const { outcome: saved } = await p.provision(await p.worktree());
    const key = saved.snapshot?.key ?? "";
    const wt2 = await p.worktree();
    const second = await withPathFirst(join(p.bin, "fail"), () => p.provision(wt2));
    // Saving the new tree needs cp too, so no snapshot is claimed either.
    expect(second.outcome).toEqual({
      receiptPath: join(wt2, PROVISION_RECEIPT),
      receipt: expect.objectContaining({ cmd: "npm ci" }),
      attempts: 1,
      skipped: false,
      source: "npm",
    });
    expect(p.runs()).toBe(2);
    const log = readFileSync(second.logPath, "utf8").split("\n");
    expect(log[0]).toBe(`# harness provision: snapshot ${key} could not be linked, installing instead: linking the dependency snapshot failed: cp refused -al`);
    expect(log[1]).toBe(`# harness provision: attempt 1/2 in ${wt2}: npm ci`);
    expect(readReceipt(wt2)?.cmd).toBe("npm ci");
  });

  it("keeps the install's receipt when the snapshot cannot be saved, claiming no snapshot", async () => {
    const p = await project();
    mkdirSync(join(p.home, "cache"), { recursive: true });
    writeFileSync(snapshotsDir(p.home), "not a folder");
    const wt = await p.worktree();
    const { outcome } = await p.provision(wt);
    expect(outcome).toEqual({
      receiptPath: join(wt, PROVISION_RECEIPT),
      receipt: expect.objectContaining({ cmd: "npm ci" }),
      attempts: 1,
      skipped: false,
      source: "npm",
    });
    expect(readReceipt(wt)?.cmd).toBe("npm ci");
  });

  it("uses no snapshot when snapshots are off, and says why", async () => {
    const p = await project();
    const wt = await p.worktree();
    const { outcome, logPath } = await p.provision(wt, { snapshots: false });
    expect(outcome.snapshot).toBeUndefined();
    expect(existsSync(snapshotsDir(p.home))).toBe(false);
    // The next line is the install's: no link was tried.
    expect(readFileSync(logPath, "utf8").split("\n").slice(0, 2)).toEqual([
      "# harness provision: no dependency snapshot: snapshots are off",
      `# harness provision: attempt 1/2 in ${wt}: npm ci`,
    ]);
  });

  it("uses no snapshot for a worktree outside git, saying why, and still installs", async () => {
    const p = await project();
    const plain = join(p.root, "plain");
    writeFiles(plain, { "package.json": "{}", "package-lock.json": "{}" });
    const { outcome, logPath } = await p.provision(plain);
    expect(outcome).toMatchObject({ attempts: 1, receipt: { cmd: "npm ci" } });
    expect(outcome.snapshot).toBeUndefined();
    expect(readFileSync(logPath, "utf8").split("\n")[0]).toMatch(/^# harness provision: no dependency snapshot: git rev-parse .*not-a-repository/);
  });

  it("uses no snapshot unsandboxed as root (repository code could write the shared files)", async () => {
    const p = await project();
    const off = new Sandbox({ ...sandboxSettingsFromEnv({ HARNESS_SANDBOX: "off" }) });
    // A configured command, never a package manager: unsandboxed, a mutant that drops the run's
    // folder and environment would run the real npm in the folder the tests run from.
    const { outcome, logPath } = await p.provision(await p.worktree(), { sandbox: off, config: { command: "true", env: p.env } });
    expect(outcome.snapshot).toBeUndefined();
    const reason = process.getuid?.() === 0 ? "unsandboxed as root" : "the config rung is not a lockfile install";
    expect(readFileSync(logPath, "utf8").split("\n")[0]).toBe(`# harness provision: no dependency snapshot: ${reason}`);
  });
});

describe("provisionWorktree failures, exactly", () => {
  it("describes a failing exit code in the log and the error", async () => {
    const p = await project();
    const wt = await p.worktree();
    const error = (await p.provision(wt, { config: { command: "exit 3" } }).catch((e: unknown) => e)) as WorkspaceProvisionError;
    expect(error).toBeInstanceOf(WorkspaceProvisionError);
    const logPath = join(p.root, "logs", "deep", "wt1.log");
    expect(error.message).toBe(`provisioning ${wt} failed after 2 attempts: exit 3 exited with code 3 (log: ${logPath})`);
    const notes = readFileSync(logPath, "utf8")
      .split("\n")
      .filter((line) => line.startsWith("# harness provision: attempt"));
    expect(notes).toEqual([
      `# harness provision: attempt 1/2 in ${wt}: exit 3`,
      "# harness provision: attempt 1 exited with code 3",
      `# harness provision: attempt 2/2 in ${wt}: exit 3`,
      "# harness provision: attempt 2 exited with code 3",
    ]);
  });

  it("describes a command ended by a signal (unsandboxed: the signal is the command's own)", async () => {
    const p = await project();
    const wt = await p.worktree();
    const off = new Sandbox({ ...sandboxSettingsFromEnv({ HARNESS_SANDBOX: "off" }) });
    const error = (await p.provision(wt, { sandbox: off, config: { command: "kill -TERM $$" } }).catch((e: unknown) => e)) as WorkspaceProvisionError;
    expect(error).toMatchObject({ exitCode: null, timedOut: false, attempts: 2 });
    expect(error.message).toContain("failed after 2 attempts: kill -TERM $$ was ended by SIGTERM (log: ");
  });

  it("describes a package manager that cannot start", async () => {
    const p = await project();
    const wt = await p.worktree();
    const error = (await p.provision(wt, { config: { env: { set: { PATH: join(p.root, "empty") } } } }).catch((e: unknown) => e)) as WorkspaceProvisionError;
    expect(error.message).toContain("failed after 2 attempts: npm ci could not start (ENOENT: program npm not found) (log: ");
  });

  it("reports package-manager caches that cannot be made, before anything runs", async () => {
    const p = await project();
    const wt = await p.worktree();
    writeFileSync(join(p.root, "home-file"), "");
    const home = join(p.root, "home-file");
    const error = (await p.provision(wt, { harnessHome: home }).catch((e: unknown) => e)) as WorkspaceProvisionError;
    expect(error).toBeInstanceOf(WorkspaceProvisionError);
    expect(error.message).toMatch(new RegExp(`^cannot create the package-manager caches under ${home}: ENOTDIR`));
    expect({ ...error }).toMatchObject({ cmd: "npm ci", exitCode: null, logPath: join(p.root, "logs", "deep", "wt1.log"), logTail: "", taskId: "t" });
    expect(p.runs()).toBe(0);
  });

  it("reports a log that cannot be written with the command, and nothing runs", async () => {
    const p = await project();
    const wt = await p.worktree();
    writeFileSync(join(p.root, "logs-file"), "");
    const logPath = join(p.root, "logs-file", "p.log");
    const config = { command: "npm ci", env: { set: { PATH: fakePath(p.bin), RECORD_DIR: p.records } } };
    const error = (await provisionWorktree({
      sandbox: operatorSandbox,
      worktree: wt,
      taskId: "t9",
      logPath,
      harnessHome: p.home,
      snapshots: false,
      config,
    }).catch((e: unknown) => e)) as WorkspaceProvisionError;
    expect(error.message).toMatch(new RegExp(`^cannot write the provisioning log ${logPath}: EEXIST`));
    expect({ ...error }).toMatchObject({ cmd: "npm ci", exitCode: null, logPath, logTail: "", taskId: "t9" });
    expect(p.runs()).toBe(0);
  });

  it.each([
    ["is missing", (root: string) => join(root, "missing")],
    [
      "is a file",
      (root: string) => {
        writeFileSync(join(root, "file"), "");
        return join(root, "file");
      },
    ],
  ])("refuses a worktree that %s, naming it", async (_what, make) => {
    const root = makeTempDir("harness-prov-paths-");
    const worktree = make(root);
    const error = (await provisionWorktree({ sandbox: operatorSandbox, worktree, taskId: "t4", logPath: join(root, "p.log") }).catch(
      (e: unknown) => e,
    )) as WorkspaceProvisionError;
    expect(error).toBeInstanceOf(WorkspaceProvisionError);
    expect(error.message).toBe(`worktree ${worktree} does not exist or is not a directory`);
    expect({ ...error }).toMatchObject({ cmd: null, exitCode: null, logPath: join(root, "p.log"), logTail: "", taskId: "t4" });
  });
});

describe("provisioning's environment and admission", () => {
  it("runs with the network (registries) in a namespace of its own, not the App's (issue 30)", async () => {
    const p = await project();
    const wt = await p.worktree();
    await p.provision(wt, {
      config: {
        command: 'readlink /proc/self/ns/net > "$RECORD_DIR/net"; ip route show default > "$RECORD_DIR/route"',
        env: { set: { PATH: fakePath(p.bin), RECORD_DIR: p.records } },
      },
    });
    expect(readFileSync(join(p.records, "net"), "utf8").trim()).not.toBe(readlinkSync("/proc/self/ns/net"));
    expect(readFileSync(join(p.records, "route"), "utf8")).toMatch(/^default via /);
  });

  it("points every package manager at the shared caches, offline-first and quiet", () => {
    expect(provisionCacheEnv("/h")).toEqual({
      npm_config_cache: "/h/cache/npm",
      npm_config_prefer_offline: "true",
      PNPM_HOME: "/h/cache/pnpm",
      YARN_CACHE_FOLDER: "/h/cache/yarn",
      CARGO_HOME: "/h/cache/cargo",
      PIP_CACHE_DIR: "/h/cache/pip",
      UV_CACHE_DIR: "/h/cache/uv",
      POETRY_CACHE_DIR: "/h/cache/poetry",
      POETRY_VIRTUALENVS_IN_PROJECT: "true",
      PIP_DISABLE_PIP_VERSION_CHECK: "1",
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_update_notifier: "false",
    });
  });

  it("refuses a seat in a worktree without a receipt, with the phase and the receipt's name", () => {
    const worktree = makeTempDir("harness-prov-paths-");
    const error = (() => {
      try {
        assertProvisioned(worktree, "tester");
      } catch (caught) {
        return caught as WorkspaceProvisionError;
      }
      throw new Error("assertProvisioned let an unprovisioned worktree through");
    })();
    expect(error.message).toBe(`tester: worktree ${worktree} is not provisioned (no valid ${PROVISION_RECEIPT}); provision it before entering`);
    expect({ ...error }).toMatchObject({ cmd: null, exitCode: null, logPath: "", logTail: "", phase: "tester" });
  });
});
