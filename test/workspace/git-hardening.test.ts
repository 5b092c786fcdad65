import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, gitResult, HARNESS_IDENTITY } from "../../src/workspace/index.js";
import { initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

describe("the App's own git calls", () => {
  it("ignore replace refs: a story starts from the objects the branch names", async () => {
    const repo = join(makeTempDir(), "repo");
    await initRepo(repo, { "file.txt": "original\n" });
    const original = await git(["rev-parse", "HEAD"], { cwd: repo });
    writeFileSync(join(repo, "file.txt"), "swapped in\n");
    await git(["commit", "-qam", "other"], { cwd: repo, env: HARNESS_IDENTITY });
    const other = await git(["rev-parse", "HEAD"], { cwd: repo });
    await git(["reset", "-q", "--hard", original], { cwd: repo });
    // What repository code would plant in a shared cache.
    await git(["update-ref", `refs/replace/${original}`, other], { cwd: repo });
    expect(await git(["show", "HEAD:file.txt"], { cwd: repo })).toBe("original");
  });

  it("ignore the global and system config of the App's user (insteadOf, pushurl, filters)", async () => {
    const home = makeTempDir();
    writeFileSync(join(home, ".gitconfig"), '[url "http://attacker.invalid/"]\n\tinsteadOf = http://\n[filter "evil"]\n\tclean = false\n');
    const repo = join(makeTempDir(), "repo");
    await initRepo(repo, { "README.md": "x\n" });
    const listed = await gitResult(["config", "--list", "--show-origin"], { cwd: repo, env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config") } });
    const text = listed.stdout?.toString() ?? "";
    expect(text).not.toContain("attacker.invalid");
    expect(text).not.toContain("filter.evil");
    expect(text).not.toMatch(/^file:\/etc\/gitconfig/m);
  });
});
