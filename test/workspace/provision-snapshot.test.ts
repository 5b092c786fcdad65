/**
 * Warm worktrees: a real `npm ci` (from a tarball in the repository, so no network) in a first
 * worktree leaves a snapshot; a second worktree of the same repository gets its node_modules
 * by hard links, read-only, and a write into a package cannot change the first worktree's copy.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { provisionWorktree, readReceipt, snapshotsDir, SNAPSHOTS_KEPT } from "../../src/workspace/index.js";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { addWorktree, commitAll, initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";
import { jest } from "@jest/globals";

jest.setTimeout(120_000);
afterAll(removeTempDirs);

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "snapshot");
const MANIFEST = JSON.stringify({ name: "app", version: "1.0.0", dependencies: { left: "file:vendor/left-1.0.0.tgz" } });

async function project(manifest = MANIFEST) {
  const root = makeTempDir("harness-snapshot-");
  const repo = join(root, "repo");
  mkdirSync(join(repo, "vendor"), { recursive: true });
  copyFileSync(join(FIXTURE, "left-1.0.0.tgz"), join(repo, "vendor", "left-1.0.0.tgz"));
  await initRepo(repo, { "package.json": manifest, "package-lock.json": readFileSync(join(FIXTURE, "package-lock.json"), "utf8") });
  await commitAll(repo, "app");
  const sandbox = new Sandbox(sandboxSettingsFromEnv({}));
  let made = 0;
  const provision = async () => {
    made += 1;
    const worktree = await addWorktree(repo, join(root, `wt${made}`));
    const outcome = await provisionWorktree({ worktree, taskId: `t${made}`, logPath: join(root, `p${made}.log`), harnessHome: join(root, "home"), sandbox });
    return { worktree, outcome, log: () => readFileSync(join(root, `p${made}.log`), "utf8") };
  };
  return { root, repo, home: join(root, "home"), provision };
}

describe("dependency snapshots", () => {
  it("installs once, then links the same tree into the next worktree, read-only, the receipt saying so", async () => {
    const p = await project();
    const first = await p.provision();
    expect(first.outcome).toMatchObject({ attempts: 1, receipt: { cmd: "npm ci" }, snapshot: { action: "saved" } });
    const installed = join(first.worktree, "node_modules", "left", "index.js");
    expect(readFileSync(installed, "utf8")).toContain("module.exports");

    const second = await p.provision();
    expect(second.outcome.attempts).toBe(0);
    expect(second.outcome.snapshot).toEqual({ key: first.outcome.snapshot?.key, action: "linked" });
    expect(second.outcome.receipt.cmd).toBe(`npm ci (linked from snapshot ${first.outcome.snapshot?.key.slice(0, 12)})`);
    expect(readReceipt(second.worktree)).toEqual(second.outcome.receipt);
    const linked = join(second.worktree, "node_modules", "left", "index.js");
    expect(statSync(linked).ino).toBe(statSync(installed).ino);
    expect(statSync(linked).mode & 0o222).toBe(0);
    // Folders are each worktree's own: a new file in one is not in the other.
    writeFileSync(join(second.worktree, "node_modules", "left", "cache.json"), "{}");
    expect(existsSync(join(first.worktree, "node_modules", "left", "cache.json"))).toBe(false);
    expect(existsSync(join(first.worktree, "node_modules", ".package-lock.json"))).toBe(
      existsSync(join(second.worktree, "node_modules", ".package-lock.json")),
    );
  });

  it("a sandboxed step cannot write into a linked package, so the other worktree's copy never changes", async () => {
    const p = await project();
    const first = await p.provision();
    const second = await p.provision();
    expect(second.outcome.snapshot?.action).toBe("linked");
    const sandbox = new Sandbox(sandboxSettingsFromEnv({}));
    const target = join(second.worktree, "node_modules", "left", "index.js");
    const attempt = await sandbox.run(
      ["/bin/sh", "-c", `echo poisoned >> '${target}'; chmod u+w '${target}' && echo poisoned >> '${target}'; exit 0`],
      { cwd: second.worktree, timeoutMs: 60_000 },
      {
        purpose: "suite",
        network: false,
        writable: [second.worktree],
      },
    );
    expect(attempt.exitCode).toBe(0);
    expect(readFileSync(join(first.worktree, "node_modules", "left", "index.js"), "utf8")).not.toContain("poisoned");
    expect(readFileSync(target, "utf8")).not.toContain("poisoned");
  });

  it("installs afresh when the lockfile changes, and keeps only the newest snapshots of a repository", async () => {
    const p = await project();
    const keys = new Set<string>();
    for (let round = 0; round <= SNAPSHOTS_KEPT; round += 1) {
      const lock = JSON.parse(readFileSync(join(p.repo, "package-lock.json"), "utf8")) as { version: string };
      lock.version = `1.0.${round}`;
      writeFileSync(join(p.repo, "package-lock.json"), JSON.stringify(lock));
      await commitAll(p.repo, `lock ${round}`);
      const { outcome } = await p.provision();
      expect(outcome.attempts).toBe(1);
      keys.add(outcome.snapshot?.key ?? "");
    }
    expect(keys.size).toBe(SNAPSHOTS_KEPT + 1);
    const scopes = readdirSync(snapshotsDir(p.home));
    expect(scopes).toHaveLength(1);
    expect(readdirSync(join(snapshotsDir(p.home), scopes[0] ?? "")).sort()).toHaveLength(SNAPSHOTS_KEPT);
  });

  it.each([
    [
      "root lifecycle scripts",
      JSON.stringify({ name: "app", version: "1.0.0", scripts: { prepare: "true" }, dependencies: { left: "file:vendor/left-1.0.0.tgz" } }),
    ],
    ["workspaces", JSON.stringify({ name: "app", version: "1.0.0", workspaces: ["packages/*"], dependencies: { left: "file:vendor/left-1.0.0.tgz" } })],
  ])("never snapshots an install with %s: each worktree installs", async (_what, manifest) => {
    const p = await project(manifest);
    const first = await p.provision();
    const second = await p.provision();
    expect([first.outcome.attempts, second.outcome.attempts]).toEqual([1, 1]);
    expect(second.outcome.snapshot).toBeUndefined();
    expect(existsSync(snapshotsDir(p.home))).toBe(false);
  });

  it("keeps repositories apart: the same lockfile in another repository installs for itself", async () => {
    const a = await project();
    await a.provision();
    const b = await project();
    const { outcome } = await b.provision();
    expect(outcome.snapshot?.action).toBe("saved");
    expect(outcome.attempts).toBe(1);
  });
});
