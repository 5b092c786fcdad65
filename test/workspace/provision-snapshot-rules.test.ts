/**
 * The rules of dependency snapshots, on real worktrees with the fake npm of provision-project.ts
 * (provision-snapshot.test.ts shows the same with a real `npm ci`): which installs are kept and
 * why not (said in the log), what the key covers, how a kept tree is sealed, which snapshots
 * are kept, and what is left behind when linking or saving fails.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { snapshotsDir, SNAPSHOTS_KEPT } from "../../src/workspace/index.js";
import { planSnapshot } from "../../src/workspace/provision/snapshot.js";
import { removeTempDirs, type FileSpec } from "../support/tmp.js";
import { DEFAULT_FILES, project, withPathFirst } from "./provision-project.js";
import { jest } from "@jest/globals";

jest.setTimeout(90_000);
afterAll(removeTempDirs);

const manifest = (fields: Record<string, unknown>): string => JSON.stringify({ name: "app", version: "1.0.0", ...fields });

/** The snapshot folders of the one repository under `home` (scope folder, entry names). */
function snapshotEntries(home: string): { scope: string; names: string[] } {
  const scopes = readdirSync(snapshotsDir(home));
  expect(scopes).toHaveLength(1);
  const scope = join(snapshotsDir(home), scopes[0] ?? "");
  return { scope, names: readdirSync(scope).sort() };
}

describe("which installs are kept as snapshots", () => {
  it.each<[string, Record<string, FileSpec>, string, { command?: string } | undefined]>([
    ["a configured command", DEFAULT_FILES, "the config rung is not a lockfile install", { command: "npm ci" }],
    [
      "the repository's hook",
      { ...DEFAULT_FILES, ".harness/provision.sh": { content: "#!/bin/sh\nexec npm ci\n", mode: 0o755 } },
      "the hook rung is not a lockfile install",
      undefined,
    ],
    ["no package.json", { "package-lock.json": "{}" }, "package.json is missing or not JSON", undefined],
    ["a package.json that is not JSON", { "package-lock.json": "{}", "package.json": "{ name" }, "package.json is missing or not JSON", undefined],
    [
      "root lifecycle scripts",
      { "package-lock.json": "{}", "package.json": manifest({ scripts: { preinstall: "x", test: "jest", postinstall: "y" } }) },
      "package.json runs preinstall, postinstall on install",
      undefined,
    ],
    [
      "workspaces, even none",
      { "package-lock.json": "{}", "package.json": manifest({ workspaces: [] }) },
      "workspaces install more than the root node_modules",
      undefined,
    ],
    ["a pnpm workspace file", { ...DEFAULT_FILES, "pnpm-workspace.yaml": "packages: []\n" }, "workspaces install more than the root node_modules", undefined],
    [
      "a committed node_modules",
      { "package.json": manifest({}), "package-lock.json": "{}", "node_modules/own/index.js": "1" },
      "node_modules is part of the checkout",
      undefined,
    ],
  ])("not with %s, and the log says why", async (_what, files, reason, config) => {
    const p = await project(files);
    const { outcome, log } = await p.provision(await p.worktree(), config ? { config: { ...config, env: p.env } } : {});
    expect(outcome.snapshot).toBeUndefined();
    expect(log()[0]).toBe(`# harness provision: no dependency snapshot: ${reason}`);
    expect(existsSync(snapshotsDir(p.home))).toBe(false);
  });

  // A re-provisioning reads the worktree after agents wrote it: what they plant is refused, never waited on or followed.
  it("not with a package.json that is a FIFO, or a lockfile that is a symlink to the App's files", async () => {
    const p = await project();
    const wt = await p.worktree();
    const resolved = { source: "npm" as const, cmd: "npm ci", argv: ["npm", "ci"] };
    rmSync(join(wt, "package.json"));
    expect((await exec(["mkfifo", "package.json"], { cwd: wt })).exitCode).toBe(0);
    expect(await planSnapshot(wt, resolved, p.home)).toEqual({ eligible: false, reason: "package.json is not a regular file" });
    rmSync(join(wt, "package.json"));
    writeFileSync(join(wt, "package.json"), manifest({}));
    writeFileSync(join(p.root, "app-secret"), "-----BEGIN PRIVATE KEY-----\n");
    rmSync(join(wt, "package-lock.json"));
    symlinkSync(join(p.root, "app-secret"), join(wt, "package-lock.json"));
    expect(await planSnapshot(wt, resolved, p.home)).toEqual({ eligible: false, reason: "package-lock.json is a symlink, which is not followed" });
  });

  it("not with a node_modules in the checkout that is only a dangling symlink", async () => {
    const p = await project();
    const wt = await p.worktree();
    symlinkSync(join(p.root, "nowhere"), join(wt, "node_modules"));
    const { outcome, log } = await p.provision(wt);
    expect(outcome.snapshot).toBeUndefined();
    expect(log()[0]).toBe("# harness provision: no dependency snapshot: node_modules is part of the checkout");
  });

  it("keeps an install under a 16-hex-digit folder per repository and a 32-hex-digit key", async () => {
    const p = await project();
    const { outcome } = await p.provision(await p.worktree());
    const { scope, names } = snapshotEntries(p.home);
    expect(scope).toMatch(/\/[0-9a-f]{16}$/);
    expect(names).toEqual([outcome.snapshot?.key]);
    expect(outcome.snapshot?.key).toMatch(/^[0-9a-f]{32}$/);
    expect(readdirSync(join(scope, outcome.snapshot?.key ?? ""))).toEqual(["node_modules"]);
  });
});

describe("what a snapshot's key covers", () => {
  it("a changed package.json installs afresh", async () => {
    const p = await project();
    await p.provision(await p.worktree());
    const { outcome } = await p.provision(await p.worktree({ "package.json": manifest({ description: "changed" }) }));
    expect(outcome).toMatchObject({ attempts: 1, snapshot: { action: "saved" } });
    expect(p.runs()).toBe(2);
  });

  it("bytes moved from package.json to the end of the lockfile are a change too", async () => {
    const p = await project({ ...DEFAULT_FILES, "package-lock.json": "L", "package.json": ' {"name":"app"}' });
    await p.provision(await p.worktree());
    const { outcome } = await p.provision(await p.worktree({ "package-lock.json": "L ", "package.json": '{"name":"app"}' }));
    expect(outcome).toMatchObject({ attempts: 1, snapshot: { action: "saved" } });
  });

  it("the same bytes under another package manager's lockfile install with that manager", async () => {
    const p = await project({ ...DEFAULT_FILES, "package-lock.json": "same" });
    const first = await p.provision(await p.worktree());
    const wt = await p.worktree();
    rmSync(join(wt, "package-lock.json"));
    writeFileSync(join(wt, "yarn.lock"), "same");
    const { outcome } = await p.provision(wt);
    expect(outcome).toMatchObject({ attempts: 1, receipt: { cmd: "yarn install --frozen-lockfile" }, snapshot: { action: "saved" } });
    expect(outcome.snapshot?.key).not.toBe(first.outcome.snapshot?.key);
    expect([p.runs("npm"), p.runs("yarn")]).toEqual([1, 1]);
  });

  it("two repositories with the same files keep their own snapshots", async () => {
    const a = await project();
    const b = await project();
    await a.provision(await a.worktree(), { harnessHome: b.home });
    const { outcome } = await b.provision(await b.worktree());
    expect(outcome).toMatchObject({ attempts: 1, snapshot: { action: "saved" } });
    expect(readdirSync(snapshotsDir(b.home))).toHaveLength(2);
  });
});

describe("how a kept tree is sealed", () => {
  it("takes every write bit and any setuid or setgid bit away, hands files to nobody when root, and keeps symlinks", async () => {
    const p = await project();
    writeFileSync(
      join(p.records, "extra.sh"),
      "printf x > node_modules/left/tool && chmod 6775 node_modules/left/tool\nln -s index.js node_modules/left/alias\n",
    );
    const { outcome } = await p.provision(await p.worktree());
    expect(outcome.snapshot?.action).toBe("saved");
    const kept = join(snapshotEntries(p.home).scope, outcome.snapshot?.key ?? "", "node_modules", "left");
    expect(statSync(join(kept, "tool")).mode & 0o7777).toBe(0o555);
    expect(statSync(join(kept, "index.js")).mode & 0o7777).toBe(0o444);
    expect(lstatSync(join(kept, "alias")).isSymbolicLink()).toBe(true);
    if (process.getuid?.() === 0) expect(statSync(join(kept, "index.js")).uid).toBe(65534);
    else expect(statSync(join(kept, "index.js")).uid).toBe(process.getuid?.());
  });

  it.each([
    ["at the top", "mkfifo node_modules/pipe\n"],
    ["in a package", "mkfifo node_modules/left/pipe\n"],
  ])("keeps nothing when the tree holds a special file (%s), and leaves no half-built snapshot", async (_where, extra) => {
    const p = await project();
    writeFileSync(join(p.records, "extra.sh"), extra);
    const { outcome } = await p.provision(await p.worktree());
    expect(outcome).toMatchObject({ attempts: 1 });
    expect(outcome.snapshot).toBeUndefined();
    expect(snapshotEntries(p.home).names).toEqual([]);
  });

  it("keeps nothing when the install left no node_modules folder", async () => {
    const p = await project();
    writeFileSync(join(p.records, "extra.sh"), "rm -rf node_modules && echo file > node_modules\n");
    const { outcome } = await p.provision(await p.worktree());
    expect(outcome.snapshot).toBeUndefined();
    expect(existsSync(snapshotsDir(p.home))).toBe(false);
  });
});

describe("which snapshots are kept", () => {
  it(`keeps the ${SNAPSHOTS_KEPT} most recently used of a repository, a linked one counting as used, and never one still being built`, async () => {
    const p = await project();
    const lock = (n: number) => ({ "package-lock.json": `lock ${n}` });
    const keys: string[] = [];
    for (const n of [1, 2, 3]) keys.push((await p.provision(await p.worktree(lock(n)))).outcome.snapshot?.key ?? "");
    const { scope } = snapshotEntries(p.home);
    // Another worktree's save in progress: older than every snapshot, and not one of them.
    const building = join(scope, `${keys[0]}.building-1-1`);
    mkdirSync(building);
    const old = new Date(Date.now() - 3_600_000);
    keys.forEach((key, i) => utimesSync(join(scope, key), new Date(old.getTime() + i * 1000), new Date(old.getTime() + i * 1000)));
    utimesSync(building, new Date(0), new Date(0));
    // Lock 1 is used again (the oldest until now), then lock 4 is saved.
    expect((await p.provision(await p.worktree(lock(1)))).outcome.snapshot).toEqual({ key: keys[0], action: "linked" });
    const fourth = (await p.provision(await p.worktree(lock(4)))).outcome.snapshot?.key ?? "";
    expect(snapshotEntries(p.home).names).toEqual([keys[0], keys[2], fourth, `${keys[0]}.building-1-1`].sort());
  });
});

describe("when linking or saving fails", () => {
  it("a failed link leaves nothing of the copy for the install that follows", async () => {
    const p = await project();
    const { outcome: first } = await p.provision(await p.worktree());
    const wt = await p.worktree();
    const second = await withPathFirst(join(p.bin, "fail"), () => p.provision(wt));
    expect(second.log()[0]).toBe(
      `# harness provision: snapshot ${first.snapshot?.key} could not be linked, installing instead: linking the dependency snapshot failed: cp refused -al`,
    );
    expect(second.log()[1]).toBe(`# harness provision: attempt 1/2 in ${wt}: npm ci`);
    expect(existsSync(join(p.records, "npm.found"))).toBe(false);
    expect(existsSync(join(wt, "node_modules", "partial"))).toBe(false);
    // The failed save (the same cp) kept nothing and left no half-built folder.
    expect(second.outcome.snapshot).toBeUndefined();
    expect(snapshotEntries(p.home).names).toEqual([first.snapshot?.key]);
  });

  it("a link that fails before copying anything is reported as the link's failure, its message trimmed", async () => {
    const p = await project();
    const { outcome: first } = await p.provision(await p.worktree());
    const wt = await p.worktree();
    const second = await withPathFirst(join(p.bin, "fail-early"), () => p.provision(wt));
    expect(second.log()[0]).toBe(
      `# harness provision: snapshot ${first.snapshot?.key} could not be linked, installing instead: linking the dependency snapshot failed: cp refused early`,
    );
    expect(second.log()[1]).toBe(`# harness provision: attempt 1/2 in ${wt}: npm ci`);
    expect(second.outcome).toMatchObject({ attempts: 1 });
  });

  it("a snapshot another worktree saved first is kept, and this one's copy is dropped", async () => {
    const p = await project();
    const wt = await p.worktree();
    const first = await p.provision(await p.worktree());
    const key = first.outcome.snapshot?.key ?? "";
    const { scope } = snapshotEntries(p.home);
    // The snapshot's folder holds something else already (no node_modules, so nothing to link).
    renameSync(join(scope, key, "node_modules"), join(scope, key, "other"));
    const { outcome } = await p.provision(wt);
    expect(outcome).toMatchObject({ attempts: 1 });
    expect(outcome.snapshot).toBeUndefined();
    expect(snapshotEntries(p.home).names).toEqual([key]);
    expect(readdirSync(join(scope, key))).toEqual(["other"]);
  });
});

describe("a linked snapshot", () => {
  it("is the same files, and the worktree's own folders", async () => {
    const p = await project();
    const first = await p.provision(await p.worktree());
    const wt = await p.worktree();
    const second = await p.provision(wt);
    expect(second.outcome.snapshot).toEqual({ key: first.outcome.snapshot?.key, action: "linked" });
    const kept = join(snapshotEntries(p.home).scope, first.outcome.snapshot?.key ?? "", "node_modules", "left", "index.js");
    expect(statSync(join(wt, "node_modules", "left", "index.js")).ino).toBe(statSync(kept).ino);
    expect(readFileSync(join(wt, "node_modules", "left", "index.js"), "utf8")).toBe("module.exports = 1;\n");
  });
});
