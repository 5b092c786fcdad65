/**
 * A linked `node_modules` pnpm installed is compared with the committed `pnpm-lock.yaml`
 * through the real `harness clean-clone`: linked when it is the lockfile's install, refused
 * naming the package when it holds one the lockfile does not (a package left from another
 * branch passes the suite in the user's tree, not after CI's `pnpm install --frozen-lockfile`).
 * pnpm is not needed: the project is laid out as pnpm leaves it (test/workspace/pnpm-layout.ts).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";
import { cleanCloneNodeTest } from "./clean-clone-in-process.js";
import { linkTop, pnpmProject } from "../workspace/pnpm-layout.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "cc-stale-pnpm-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let repo = "";
beforeAll(async () => {
  repo = join(root, "project");
  mkdirSync(repo);
  await git(["init", "-q"], { cwd: repo });
  writeFileSync(join(repo, ".gitignore"), "node_modules/\n");
  pnpmProject(repo, 9, [{ name: "dep-locked", version: "1.0.0" }], ["dep-locked@1.0.0"]);
  writeFileSync(join(repo, "test.js"), 'require("dep-locked");\n');
  await git(["add", "-A"], { cwd: repo });
  await git(["commit", "-q", "-m", "base"], { cwd: repo, env: HARNESS_IDENTITY });
});

describe("a linked node_modules pnpm installed, in harness clean-clone", () => {
  it("is linked when it matches the committed pnpm-lock.yaml", async () => {
    const run = await cleanCloneNodeTest(repo);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as { ran: boolean; exitCode: number; linked: string[]; warnings?: string[] };
    expect(result).toMatchObject({ ran: true, exitCode: 0, linked: ["node_modules"] });
    // Compared, not waved through: no "linked without comparing" warning.
    expect((result.warnings ?? []).filter((line) => line.includes("without comparing"))).toEqual([]);
  });

  it("is refused, naming the package, when it holds a package pnpm-lock.yaml does not", async () => {
    linkTop(join(repo, "node_modules"), "dep-extra@1.0.0");
    writeFileSync(join(repo, "test.js"), 'require("dep-locked"); require("dep-extra");\n');
    // The user's tree passes: the extra package is there.
    expect((await exec(["node", "test.js"], { cwd: repo })).exitCode).toBe(0);
    const run = await cleanCloneNodeTest(repo);
    expect(run.code).toBe(2);
    const result = JSON.parse(run.stdout) as { ran: boolean; reason: string };
    expect(result.ran).toBe(false);
    expect(result.reason).toMatch(/node_modules does not match the committed lockfile/);
    expect(result.reason).toMatch(/installed but not in the committed lockfile: dep-extra@1\.0\.0/);
    expect(result.reason).toMatch(/run pnpm install --frozen-lockfile, or provision the clean clone afresh/);
  });
});
