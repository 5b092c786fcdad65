/**
 * An npm-workspaces repository in the clean clone: npm links each workspace package into
 * `node_modules` (`node_modules/@demo/a -> ../../packages/a`), so a linked `node_modules`
 * leads back into the user's working tree. The check used to refuse it (`clean-clone-not-run`,
 * naming `--provision`, which `harness run` does not take): every workspaces repository was
 * blocked by default. Now the clone is provisioned afresh, and its suite runs against the
 * clone's own packages: a file `.gitignore` keeps out of a package fails there, as in CI.
 */
import { exec } from "../../src/exec/index.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";
import { runCleanCloneCheck } from "../../src/workspace/index.js";
import { observe, removeTemps, repoWith, run, temp, write } from "./clean-clone-fixtures.js";

afterAll(removeTemps);

/** Two local packages (b uses a) under `packages/`, installed and locked by npm itself: no registry needed. */
async function workspacesRepo(): Promise<string> {
  const repo = await repoWith({
    ".gitignore": "node_modules/\n*.generated.js\n",
    "package.json": JSON.stringify({ name: "mono", private: true, workspaces: ["packages/*"], scripts: { test: "node packages/b/test.js" } }, null, 2),
    "packages/a/package.json": JSON.stringify({ name: "@demo/a", version: "1.0.0", main: "index.js" }, null, 2),
    "packages/a/index.js": "exports.twice = (n) => n * 2;\n",
    "packages/b/package.json": JSON.stringify({ name: "@demo/b", version: "1.0.0", dependencies: { "@demo/a": "1.0.0" } }, null, 2),
    "packages/b/test.js":
      'const { twice } = require("@demo/a");\nif (twice(2) !== 4) { console.error("twice(2) is not 4"); process.exit(1); }\nconsole.log("b ok");\n',
  });
  const install = await exec(["npm", "install", "--offline", "--no-audit", "--no-fund"], {
    cwd: repo,
    timeoutMs: 120_000,
    env: { set: { HOME: temp("cc-ws-home-") } },
  });
  expect({ exitCode: install.exitCode, tail: install.tail }).toMatchObject({ exitCode: 0 });
  await run(repo, "add", "package-lock.json");
  await run(repo, "commit", "-qm", "lock");
  return repo;
}

const check = (repo: string) =>
  runCleanCloneCheck({ sandbox: sandboxFromEnv(), repo, command: "npm test", scratchRoot: temp("cc-ws-root-"), timeoutMs: 120_000 });

describe("the clean clone of an npm-workspaces repository", () => {
  it("is provisioned afresh rather than refused, runs, and leaves the user's tree as it was", async () => {
    const repo = await workspacesRepo();
    write(repo, { "packages/a/index.js": "// Doubles.\nexports.twice = (n) => n * 2;\n" });
    const before = await observe(repo);
    const result = await check(repo);
    expect({ ran: result.ran, exitCode: result.exitCode, reason: result.reason }).toEqual({ ran: true, exitCode: 0, reason: undefined });
    expect(result.outputTail).toMatch(/b ok/);
    expect(result.provisioned).toBe(true);
    expect(result.linked).toEqual([]);
    expect(result.warnings?.join("\n")).toMatch(/workspaces \(package\.json\).*provisioned afresh/);
    expect(await observe(repo)).toEqual(before);
  }, 240_000);

  it("runs the suite against the clone's own packages: a package file .gitignore keeps out fails there", async () => {
    const repo = await workspacesRepo();
    write(repo, {
      "packages/a/index.js": 'exports.twice = require("./twice.generated.js");\n',
      "packages/a/twice.generated.js": "module.exports = (n) => n * 2;\n",
    });
    // In the user's tree the suite passes, through the workspace link to their own packages/a.
    const own = await exec(["npm", "test"], { cwd: repo, timeoutMs: 60_000, env: { set: { HOME: temp("cc-ws-home-") } } });
    expect(own.exitCode).toBe(0);
    const result = await check(repo);
    expect({ ran: result.ran, exitCode: result.exitCode }).toEqual({ ran: true, exitCode: 1 });
    expect(result.outputTail).toMatch(/twice\.generated\.js/);
  }, 240_000);
});
