/**
 * How the App runs git (git.ts): a read-only call takes no optional lock, a call caps what it
 * keeps of stdout when asked, and only a working tree counts as one.
 */
import { join } from "node:path";
import { gitResult, isWorkTree } from "../../src/workspace/index.js";
import { initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

/** The environment git hands the programs it runs (an alias starting with `!`). */
async function gitEnvironment(repo: string, readOnly: boolean): Promise<string> {
  const result = await gitResult(["-c", "alias.environment=!env", "environment"], { cwd: repo, readOnly });
  return result.stdout?.toString() ?? "";
}

it("takes no optional lock for a read-only call, and leaves a writing call's locks alone", async () => {
  const repo = join(makeTempDir(), "repo");
  await initRepo(repo, { "README.md": "# demo\n" });
  expect(await gitEnvironment(repo, true)).toMatch(/^GIT_OPTIONAL_LOCKS=0$/m);
  expect(await gitEnvironment(repo, false)).not.toMatch(/^GIT_OPTIONAL_LOCKS=/m);
});

it("keeps no more of stdout than asked, and says so; all of it when not asked", async () => {
  const repo = join(makeTempDir(), "repo");
  await initRepo(repo, { "README.md": "# demo\n" });
  const capped = await gitResult(["log", "--format=%H%n%H%n%H"], { cwd: repo, captureBytes: 10 });
  expect(capped.stdout?.length).toBe(10);
  expect(capped.stdoutTruncated).toBe(true);
  const whole = await gitResult(["log", "--format=%H%n%H%n%H"], { cwd: repo });
  expect(whole.stdout?.toString().trim().split("\n")).toHaveLength(3);
  expect(whole.stdoutTruncated).not.toBe(true);
});

it("counts a working tree as one, and neither a repository's .git folder nor a folder outside any repository", async () => {
  const repo = join(makeTempDir(), "repo");
  await initRepo(repo, { "README.md": "# demo\n" });
  expect(await isWorkTree(repo)).toBe(true);
  // git answers "false" there, with exit 0.
  expect(await isWorkTree(join(repo, ".git"))).toBe(false);
  expect(await isWorkTree(makeTempDir())).toBe(false);
});
