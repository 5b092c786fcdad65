import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { schemas } from "../../src/schema/index.js";
import {
  assertProvisioned,
  git,
  isProvisioned,
  PROVISION_RECEIPT,
  provisionWorktree,
  readReceipt,
  WorkspaceProvisionError,
  writeReceipt,
} from "../../src/workspace/index.js";
import { addWorktree, commitAll, initRepo, makeTempDir, removeTempDirs, waitFor } from "../support/tmp.js";

afterAll(removeTempDirs);

/** A process polling the receipt as fast as it can until a stop file appears; reports what it saw. */
const READER = `
const fs = require("node:fs");
const [target, ready, stop] = process.argv.slice(1);
let reads = 0, partial = 0;
const seen = new Set();
fs.writeFileSync(ready, "");
while (!fs.existsSync(stop)) {
  let text;
  try { text = fs.readFileSync(target, "utf8"); } catch { continue; }
  reads += 1;
  try {
    const receipt = JSON.parse(text);
    if (!text.endsWith("\\n") || text.indexOf("\\n") !== text.length - 1 || receipt.exitCode !== 0) partial += 1;
    seen.add(receipt.durationMs);
  } catch { partial += 1; }
}
process.stdout.write(JSON.stringify({ reads, partial, distinct: seen.size }));
`;

describe("receipt", () => {
  it("is never observed partial by a concurrent reader", async () => {
    const worktree = makeTempDir("harness-receipt-");
    const ready = join(worktree, "ready");
    const stop = join(worktree, "stop");
    const reader = exec(["node", "-e", READER, join(worktree, PROVISION_RECEIPT), ready, stop], { cwd: worktree, captureStdout: true, timeoutMs: 60_000 });
    expect(await waitFor(() => existsSync(ready), 20_000)).toBe(true);
    // Long commands make each write large enough to be torn if it were not atomic.
    for (let i = 0; i < 400; i += 1) {
      writeReceipt(worktree, { cmd: `install ${"x".repeat(8192)} ${i}`, exitCode: 0, at: new Date().toISOString(), durationMs: i });
      if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    writeFileSync(stop, "");
    const result = await reader;
    const report = JSON.parse(result.stdout?.toString() ?? "{}") as { reads: number; partial: number; distinct: number };
    expect(report.partial).toBe(0);
    expect(report.reads).toBeGreaterThan(0);
    expect(report.distinct).toBeGreaterThan(1);
  });

  it("is one schema-valid JSON line with keys in the pinned order", () => {
    const worktree = makeTempDir("harness-receipt-");
    writeReceipt(worktree, { durationMs: 5, at: "2026-01-01T00:00:00.000Z", exitCode: 0, cmd: "npm ci" } as never);
    const text = readFileSync(join(worktree, PROVISION_RECEIPT), "utf8");
    expect(text).toBe('{"cmd":"npm ci","exitCode":0,"at":"2026-01-01T00:00:00.000Z","durationMs":5}\n');
    expect(schemas().issues("provision-receipt", JSON.parse(text))).toEqual([]);
    expect(() => writeReceipt(worktree, { cmd: "x", exitCode: 1, at: "now", durationMs: -1 } as never)).toThrow(/\.harness-provisioned/);
  });

  it("an unreadable or invalid receipt counts as missing", () => {
    const worktree = makeTempDir("harness-receipt-");
    writeFileSync(join(worktree, PROVISION_RECEIPT), '{"cmd":null,"exitCode":0');
    expect(isProvisioned(worktree)).toBe(false);
    writeFileSync(join(worktree, PROVISION_RECEIPT), '{"cmd":null,"exitCode":1,"at":"2026-01-01T00:00:00Z","durationMs":0}\n');
    expect(readReceipt(worktree)).toBeUndefined();
  });
});

describe("receipt and git", () => {
  it("never shows in git status, in the repository or a linked worktree, and the exclude line is not duplicated", async () => {
    const root = makeTempDir("harness-receipt-git-");
    const repo = join(root, "repo");
    await initRepo(repo, { "README.md": "hello\n" });
    const linked = await addWorktree(repo, join(root, "linked"));
    const logPath = join(root, "provision.log");
    await provisionWorktree({ worktree: repo, taskId: "a", logPath, harnessHome: join(root, "home") });
    await provisionWorktree({ worktree: linked, taskId: "b", logPath, harnessHome: join(root, "home") });
    expect(existsSync(join(linked, PROVISION_RECEIPT))).toBe(true);
    expect(await git(["status", "--porcelain", "--untracked-files=all"], { cwd: repo, readOnly: true })).toBe("");
    expect(await git(["status", "--porcelain", "--untracked-files=all"], { cwd: linked, readOnly: true })).toBe("");
    const exclude = readFileSync(join(repo, ".git", "info", "exclude"), "utf8");
    expect(exclude.split("\n").filter((line) => line === `/${PROVISION_RECEIPT}`)).toHaveLength(1);

    // Committing everything in the worktree does not pick it up either.
    writeFileSync(join(linked, "change.txt"), "x\n");
    await commitAll(linked, "change");
    expect(await git(["ls-files"], { cwd: linked, readOnly: true })).not.toContain(PROVISION_RECEIPT);
  });

  it("anchors the exclude lines at a worktree that is a sub-folder of its repository", async () => {
    const root = makeTempDir("harness-receipt-git-");
    const repo = join(root, "repo");
    await initRepo(repo, { "packages/a [x]/README.md": "hello\n" });
    const sub = join(repo, "packages", "a [x]");
    await provisionWorktree({ worktree: sub, taskId: "s", logPath: join(root, "s.log"), harnessHome: join(root, "home") });
    expect(existsSync(join(sub, PROVISION_RECEIPT))).toBe(true);
    expect(await git(["status", "--porcelain", "--untracked-files=all"], { cwd: repo, readOnly: true })).toBe("");
    const exclude = readFileSync(join(repo, ".git", "info", "exclude"), "utf8");
    expect(exclude).toContain(`/packages/a \\[x\\]/${PROVISION_RECEIPT}\n`);
    // A receipt-named file elsewhere in the repository is not hidden.
    writeFileSync(join(repo, PROVISION_RECEIPT), "{}");
    expect(await git(["status", "--porcelain"], { cwd: repo, readOnly: true })).toBe(`?? ${PROVISION_RECEIPT}`);
  });

  it("adds the exclude line once even when provisioning worktrees concurrently", async () => {
    const root = makeTempDir("harness-receipt-git-");
    const repo = join(root, "repo");
    await initRepo(repo, { "README.md": "hello\n" });
    // One at a time: git itself does not guard concurrent `worktree add` (the provisioning is what runs concurrently here).
    const worktrees: string[] = [];
    for (const n of [1, 2, 3]) worktrees.push(await addWorktree(repo, join(root, `wt${n}`), `b${n}`));
    await Promise.all(worktrees.map((worktree, n) => provisionWorktree({ worktree, taskId: `t${n}`, logPath: join(root, `l${n}.log`), harnessHome: join(root, "home") })));
    const exclude = readFileSync(join(repo, ".git", "info", "exclude"), "utf8");
    expect(exclude.split("\n").filter((line) => line === `/${PROVISION_RECEIPT}`)).toHaveLength(1);
  });
});

describe("assertProvisioned", () => {
  it("throws WorkspaceProvisionError naming the phase when the receipt is missing, and never provisions", () => {
    const worktree = makeTempDir("harness-assert-");
    writeFileSync(join(worktree, "package-lock.json"), "{}");
    let caught: unknown;
    try {
      assertProvisioned(worktree, "implementer");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(WorkspaceProvisionError);
    expect(caught).toMatchObject({ failureClass: "workspace-provision-failed", phase: "implementer", cmd: null, exitCode: null });
    expect((caught as Error).message).toContain("implementer");
    expect(existsSync(join(worktree, PROVISION_RECEIPT))).toBe(false);
  });

  it("passes once the worktree is provisioned", async () => {
    const worktree = makeTempDir("harness-assert-");
    const logs = makeTempDir("harness-assert-logs-");
    await provisionWorktree({ worktree, taskId: "t", logPath: join(logs, "provision.log"), harnessHome: join(logs, "home") });
    expect(() => assertProvisioned(worktree, "verifier")).not.toThrow();
  });
});
