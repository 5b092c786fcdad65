/**
 * `harness clean-clone` reads the repository's `.github/harness.yml` (its `test` and
 * `clean_clone` keys; flags win), prints a one-line verdict on stderr that names what the
 * commit left out when the suite fails there (nothing with --json), and links nothing with --no-link.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "cc-config-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;
async function repoWith(files: Record<string, string>): Promise<string> {
  counter += 1;
  const repo = join(root, `repo-${counter}`);
  mkdirSync(repo);
  await git(["init", "-q"], { cwd: repo });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(repo, path, ".."), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  await git(["add", "-A"], { cwd: repo });
  await git(["commit", "-q", "-m", "base"], { cwd: repo, env: HARNESS_IDENTITY });
  return repo;
}

async function cleanClone(repo: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  // A HOME of its own: the developer's global ignore file must not decide these cases.
  return runCli(["clean-clone", "--timeout-ms", "60000", ...args], repo, { ...process.env, HOME: root });
}

describe("harness clean-clone and the repository's configuration", () => {
  it("takes test.command from .github/harness.yml, and a flag wins over it", async () => {
    const repo = await repoWith({ ".github/harness.yml": "test:\n  command: echo from-config\n" });
    const fromConfig = await cleanClone(repo);
    expect(fromConfig.code).toBe(0);
    expect(JSON.parse(fromConfig.stdout)).toMatchObject({ ran: true, command: "echo from-config", outputTail: "from-config" });
    expect(fromConfig.stderr).toMatch(/^harness clean-clone: passed: `echo from-config` exits 0 in a clean clone of [0-9a-f]{12}$/m);
    const fromFlag = await cleanClone(repo, "--test-cmd", "echo from-flag");
    expect(JSON.parse(fromFlag.stdout)).toMatchObject({ command: "echo from-flag", outputTail: "from-flag" });
  });

  it("takes clean_clone.link, and --no-link links nothing", async () => {
    const repo = await repoWith({ ".github/harness.yml": "test:\n  command: ls deps/\nclean_clone:\n  link: [deps]\n", ".gitignore": "deps/\n" });
    mkdirSync(join(repo, "deps"));
    writeFileSync(join(repo, "deps", "lib.js"), "1\n");
    expect(JSON.parse((await cleanClone(repo)).stdout)).toMatchObject({ ran: true, exitCode: 0, linked: ["deps"] });
    const none = await cleanClone(repo, "--no-link");
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout)).toMatchObject({ ran: true, linked: [] });
  });

  it("names the files the commit left out when the suite fails there, and prints only the JSON with --json", async () => {
    const repo = await repoWith({ ".gitignore": "*.local.json\n", README: "x\n" });
    writeFileSync(join(repo, "settings.local.json"), "{}\n");
    const failed = await cleanClone(repo, "--test-cmd", "cat settings.local.json");
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /^harness clean-clone: failed: `cat settings\.local\.json` exits 1 in a clean clone of [0-9a-f]{12} \(HEAD as committed: no uncommitted changes\); left out of the commit \(ignored\): settings\.local\.json$/m,
    );
    const json = await cleanClone(repo, "--test-cmd", "cat settings.local.json", "--json");
    expect(json.code).toBe(1);
    expect(json.stderr).toBe("");
    expect(JSON.parse(json.stdout)).toMatchObject({ ran: true, exitCode: 1 });
  });

  it("refuses a bad configuration with exit 2, naming the file and the key", async () => {
    const repo = await repoWith({ ".github/harness.yml": "clean_clone:\n  depth: -1\n" });
    const run = await cleanClone(repo, "--test-cmd", "true");
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/harness\.yml.*clean_clone.*depth/);
  });
});
