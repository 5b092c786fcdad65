import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { schemas } from "../../src/schema/index.js";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "cc-cli-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Captured {
  code: number;
  stdout: string;
  stderr: string;
}

async function harness(cwd: string, ...args: string[]): Promise<Captured> {
  return harnessWith(process.env, cwd, ...args);
}

async function harnessWith(env: NodeJS.ProcessEnv, cwd: string, ...args: string[]): Promise<Captured> {
  return runCli(["clean-clone", ...args], cwd, env);
}

let repo = "";
beforeAll(async () => {
  repo = join(root, "repo");
  mkdirSync(repo);
  await git(["init", "-q"], { cwd: repo });
  writeFileSync(join(repo, "value.txt"), "committed\n");
  writeFileSync(join(repo, ".gitignore"), "node_modules/\n");
  mkdirSync(join(repo, "node_modules"));
  writeFileSync(join(repo, "node_modules", "dep.js"), "module.exports = 1;\n");
  await git(["add", "-A"], { cwd: repo });
  await git(["commit", "-q", "-m", "base"], { cwd: repo, env: HARNESS_IDENTITY });
  writeFileSync(join(repo, "value.txt"), "changed\n");
});

describe("harness clean-clone", () => {
  it("reads the operator's sandbox settings from its own environment once, and exits 2 naming a bad one before any clone", async () => {
    const run = await harnessWith({ ...process.env, HARNESS_SANDBOX: "maybe" }, repo, "--command", "true");
    expect([run.code, run.stdout]).toEqual([2, ""]);
    expect(run.stderr).toMatch(/^harness clean-clone: .*HARNESS_SANDBOX.*must be 'on' or 'off'/);
  });

  it("exits 0 when the suite passes in the clone, printing the result and writing --out", async () => {
    const out = join(root, "results", "clean-clone-result.json");
    const run = await harness(repo, "--command", "cat value.txt", "--out", out, "--timeout-ms", "60000", "--link", "node_modules");
    expect(run.code).toBe(0);
    const printed: unknown = JSON.parse(run.stdout);
    expect(printed).toMatchObject({ ran: true, exitCode: 0, command: "cat value.txt", outputTail: "changed", linked: ["node_modules"] });
    expect(JSON.parse(readFileSync(out, "utf8"))).toEqual(printed);
    expect(schemas().issues("clean-clone-result", printed)).toEqual([]);
  });

  it("exits 1 when the suite fails in the clone, taking <repo> relative to the current folder", async () => {
    const run = await harness(root, "repo", "--command", 'test -z "$(git status --porcelain)" && exit 3');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ ran: true, exitCode: 3 });
  });

  it("exits 2 with a result saying why when <repo> is not a git repository", async () => {
    const plain = join(root, "plain");
    mkdirSync(plain);
    const run = await harness(plain, "--command", "true", "--interpreter", process.execPath);
    expect(run.code).toBe(2);
    const printed = JSON.parse(run.stdout) as Record<string, unknown>;
    // Its version is asked in the clone, in the sandbox: without a clone there is none.
    expect(printed).toMatchObject({ ran: false, interpreter: process.execPath });
    expect(printed.interpreterVersion).toBeUndefined();
    expect(printed.exitCode).toBeUndefined();
    expect(run.stderr).toMatch(/did not run: .*is not inside a git working tree/);
  });

  it("takes --depth, --env, --provision and --allow-external-symlinks, and prints warnings on stderr", async () => {
    process.env.CC_CLI_PASSED = "passed";
    try {
      const run = await harness(
        repo,
        "--command",
        'git rev-list --count HEAD; echo "$CI $CC_CLI_PASSED"; node -e 0',
        "--depth",
        "1",
        "--env",
        "CC_CLI_PASSED",
        "--interpreter",
        process.execPath,
        "--provision",
        "--allow-external-symlinks",
      );
      expect(run.code).toBe(0);
      const printed = JSON.parse(run.stdout) as Record<string, unknown>;
      // Nothing to install in this repository: provisioning ran and says it installed nothing.
      expect(printed).toMatchObject({ ran: true, exitCode: 0, depth: 1, provisioned: false, linked: [], outputTail: "1\ntrue passed" });
      expect(schemas().issues("clean-clone-result", printed)).toEqual([]);
    } finally {
      delete process.env.CC_CLI_PASSED;
    }
    const warned = await harness(repo, "--command", "if true; then true; fi", "--interpreter", process.execPath);
    expect(warned.code).toBe(0);
    expect(warned.stderr).toMatch(/harness clean-clone: warning: could not tell which interpreter the command invokes/);
  });

  it.each([
    [["--command", "true", "--depth", "0"], /--depth must be a positive integer/],
    [["--command", "true", "--env", "NOT-A-NAME"], /--env must name an environment variable/],
    [["--link", "node_modules"], /--test-cmd is required \(or test\.command in \.github\/harness\.yml\)/],
    [["--test-cmd", "true", "--command", "true"], /give --test-cmd or its old name --command, not both/],
    [["--test-cmd", "true", "--link", "node_modules", "--no-link"], /give --link or --no-link, not both/],
    [["--test-cmd", "true", "--linkk", "node_modules"], /Unknown option '--linkk'.*\(did you mean --link\?\)/],
    [["--command", "true", "--timeout-ms", "soon"], /--timeout-ms must be a positive integer/],
    [["--command", "true", "--link", "../outside"], /--link must not contain empty, '.' or '..' segments/],
    [["a", "b", "--command", "true"], /at most one <repo>/],
    [["--command", "true", "--bogus"], /bogus/],
  ])("exits 2 on bad arguments %j", async (args, message) => {
    const run = await harness(repo, ...args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(message);
  });
});
