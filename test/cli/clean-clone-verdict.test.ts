/**
 * The verdict line of `harness clean-clone` on a failure, as met on real projects: it names the
 * uncommitted changes the checked commit holds (so a person tells their change from a broken
 * base), and the ignored files the commit left out without burying them under the dependency
 * folders the clone installed afresh (a workspace's packages each have a `node_modules`) or
 * repeating a file inside a folder already named (git lists both when the parent is untracked).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { exec } from "../../src/exec/index.js";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "cc-verdict-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;
async function repoWith(files: Record<string, string>): Promise<string> {
  counter += 1;
  const repo = join(root, `repo-${counter}`);
  write(repo, files);
  await git(["init", "-q"], { cwd: repo });
  await git(["add", "-A"], { cwd: repo });
  await git(["commit", "-q", "-m", "base"], { cwd: repo, env: HARNESS_IDENTITY });
  return repo;
}

function write(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

async function cleanClone(repo: string, ...args: string[]): Promise<{ code: number; stderr: string }> {
  // A HOME of its own: the developer's global ignore file must not decide these cases.
  return runCli(["clean-clone", "--timeout-ms", "120000", ...args], repo, { ...process.env, HOME: root });
}

describe("harness clean-clone's verdict on a failure", () => {
  it("names the uncommitted changes the commit holds (a changed file and a new one), or says there are none", async () => {
    const repo = await repoWith({ "check.sh": 'test "$(cat value)" = 1\n', value: "1\n" });
    const base = await cleanClone(repo, "--test-cmd", "sh check.sh && false");
    expect(base.code).toBe(1);
    expect(base.stderr).toMatch(/^harness clean-clone: failed: .* in a clean clone of [0-9a-f]{12} \(HEAD as committed: no uncommitted changes\)$/m);
    write(repo, { value: "2\n", "notes/new.txt": "new\n" });
    const changed = await cleanClone(repo, "--test-cmd", "sh check.sh");
    expect(changed.code).toBe(1);
    expect(changed.stderr).toMatch(
      /^harness clean-clone: failed: `sh check\.sh` exits 1 in a clean clone of [0-9a-f]{12} \(HEAD with your uncommitted changes to value, notes\/new\.txt\)$/m,
    );
  });

  it("names a file inside an ignored folder once, by its folder", async () => {
    const repo = await repoWith({ ".gitignore": "*.txt\n", "README.md": "x\n" });
    write(repo, { "tests/check.sh": "cat tests/data/fixture.txt\n", "tests/data/fixture.txt": "fixture\n" });
    const failed = await cleanClone(repo, "--test-cmd", "sh tests/check.sh");
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/; left out of the commit \(ignored\): tests\/data\/$/m);
  });

  it("on a workspaces repository installed afresh, names the ignored file the suite needs, not the packages' node_modules", async () => {
    const repo = await repoWith({
      ".gitignore": "node_modules/\n*.local.js\n",
      "package.json": JSON.stringify({ name: "mono", private: true, workspaces: ["packages/*"], scripts: { test: "node packages/b/test.js" } }, null, 2),
      "packages/a/package.json": JSON.stringify({ name: "@demo/a", version: "1.0.0", main: "index.js" }, null, 2),
      "packages/a/index.js": "exports.twice = (n) => n * 2;\n",
      "packages/b/package.json": JSON.stringify({ name: "@demo/b", version: "1.0.0", dependencies: { "@demo/a": "1.0.0" } }, null, 2),
      "packages/b/test.js": 'const { twice } = require("@demo/a");\nif (twice(2) !== 4) process.exit(1);\nconsole.log("b ok");\n',
    });
    // npm installs and locks the local packages itself: no registry needed.
    const install = await exec(["npm", "install", "--offline", "--no-audit", "--no-fund"], { cwd: repo, timeoutMs: 120_000, env: { set: { HOME: root } } });
    expect({ exitCode: install.exitCode, tail: install.tail }).toMatchObject({ exitCode: 0 });
    await git(["add", "package-lock.json"], { cwd: repo });
    await git(["commit", "-q", "-m", "lock"], { cwd: repo, env: HARNESS_IDENTITY });
    // A package's own node_modules (a tool's cache), and a file the suite needs that .gitignore keeps out.
    write(repo, { "packages/b/node_modules/.cache/tool.json": "{}\n", "packages/b/fixture.local.js": "module.exports = 4;\n" });
    write(repo, { "packages/b/test.js": 'if (require("./fixture.local.js") !== 4) process.exit(1);\nconsole.log("b ok");\n' });
    const failed = await cleanClone(repo, "--test-cmd", "npm test");
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/workspaces \(package\.json\).*provisioned afresh/);
    expect(failed.stderr).toMatch(
      /^harness clean-clone: failed: `npm test` exits 1 in a clean clone of [0-9a-f]{12} \(HEAD with your uncommitted changes to packages\/b\/test\.js\); left out of the commit \(ignored\): packages\/b\/fixture\.local\.js$/m,
    );
  }, 240_000);
});

describe("harness clean-clone's result", () => {
  it("keeps the suite's words without their colour codes (a TypeScript diagnostic printed in colour, met on a pnpm workspace)", async () => {
    const repo = await repoWith({ "README.md": "x\n" });
    const { code, stdout } = await runCli(
      ["clean-clone", "--json", "--test-cmd", "printf '\\033[91merror\\033[0m TS2307: \\033[1mCannot find module\\033[0m\\n'; exit 1"],
      repo,
      { ...process.env, HOME: root },
    );
    expect(code).toBe(1);
    expect((JSON.parse(stdout) as { outputTail: string }).outputTail).toBe("error TS2307: Cannot find module");
  });
});
