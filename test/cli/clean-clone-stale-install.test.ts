/**
 * A linked `node_modules` that is not what the committed lockfile installs is refused, naming
 * the packages: a package installed with `npm i --no-save` passes the suite in the user's tree
 * but not after CI's `npm ci`. The project is installed with the real npm, offline, from
 * tarballs made in the test.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";
import { cleanCloneNodeTest } from "./clean-clone-in-process.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "cc-stale-install-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** npm, offline, with a cache of the test's own. */
async function npm(cwd: string, ...args: string[]): Promise<string> {
  const result = await exec(["npm", ...args, "--offline", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd,
    env: { set: { npm_config_cache: join(root, "npm-cache"), npm_config_update_notifier: "false" } },
    captureStdout: true,
    timeoutMs: 120_000,
  });
  if (result.exitCode !== 0) throw new Error(`npm ${args.join(" ")} failed: ${result.tail}`);
  return result.stdout?.toString() ?? "";
}

/** A package tarball made with `npm pack`. */
async function tarball(name: string): Promise<string> {
  const dir = join(root, "packages", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0", main: "index.js" }));
  writeFileSync(join(dir, "index.js"), `module.exports = ${JSON.stringify(name)};\n`);
  const file = (await npm(dir, "pack", "--pack-destination", root)).trim().split("\n").pop() ?? "";
  return join(root, file);
}

let repo = "";
let extra = "";
beforeAll(async () => {
  const dependency = await tarball("dep-locked");
  extra = await tarball("dep-extra");
  repo = join(root, "project");
  mkdirSync(repo);
  await git(["init", "-q"], { cwd: repo });
  writeFileSync(join(repo, ".gitignore"), "node_modules/\n");
  writeFileSync(join(repo, "package.json"), JSON.stringify({ name: "project", version: "1.0.0", dependencies: { "dep-locked": `file:${dependency}` } }));
  await npm(repo, "install");
  writeFileSync(join(repo, "test.js"), 'require("dep-locked");\n');
  await git(["add", "-A"], { cwd: repo });
  await git(["commit", "-q", "-m", "base"], { cwd: repo, env: HARNESS_IDENTITY });
});

describe("a linked node_modules in harness clean-clone", () => {
  it("is linked when it matches the committed lockfile", async () => {
    const run = await cleanCloneNodeTest(repo);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ran: true, exitCode: 0, linked: ["node_modules"] });
  });

  it("is refused, naming the package, when it holds a package the lockfile does not (npm i --no-save)", async () => {
    await npm(repo, "install", "--no-save", extra);
    writeFileSync(join(repo, "test.js"), 'require("dep-locked"); require("dep-extra");\n');
    // The user's tree passes: the extra package is there.
    expect((await exec(["node", "test.js"], { cwd: repo })).exitCode).toBe(0);
    const run = await cleanCloneNodeTest(repo);
    expect(run.code).toBe(2);
    const result = JSON.parse(run.stdout) as { ran: boolean; reason: string };
    expect(result.ran).toBe(false);
    expect(result.reason).toMatch(/node_modules does not match the committed lockfile/);
    expect(result.reason).toMatch(/installed but not in the committed lockfile: dep-extra@1\.0\.0/);
    expect(result.reason).toMatch(/run npm ci, or provision the clean clone afresh/);
  });
});
