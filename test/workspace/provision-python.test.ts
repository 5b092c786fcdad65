/**
 * The Python rungs of the provisioning ladder, on real repositories: a `.venv` in the worktree
 * with the project installed into it (pip offline: the project's build backend is its own), the
 * shared pip cache, the venv first on the suite's PATH, no `provisioned: true` after installing
 * nothing, and a warning when the suite imports the package under test from outside the clone.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { sandboxFromEnv } from "../../src/sandbox/index.js";
import { cacheDir, resolveProvisionCommand, runCleanCloneCheck, venvEnv, type CleanCloneOptions, type CleanCloneResult } from "../../src/workspace/index.js";
import { makeTempDir, removeTempDirs, writeFiles, type FileSpec } from "../support/tmp.js";
import { removeTemps, repoWith, temp, write } from "./clean-clone-fixtures.js";
import { moduleAnswering, PYTHON_SUITE, pythonProject, requireVenv } from "./python-project.js";

const operatorSandbox = sandboxFromEnv();
/** pip never reaches an index in these tests: everything it installs is the project itself. */
const OFFLINE = { set: { PIP_NO_INDEX: "1" } };

beforeAll(requireVenv);
afterAll(() => {
  removeTemps();
  removeTempDirs();
});

const worktreeWith = (files: Record<string, FileSpec>): string => {
  const dir = makeTempDir("harness-py-ladder-");
  writeFiles(dir, files);
  return dir;
};
const tool = (name: string): string => {
  const bin = makeTempDir("harness-py-bin-");
  writeFiles(bin, { [name]: { content: "#!/bin/sh\nexit 0\n", mode: 0o755 } });
  return bin;
};
const PROJECT = '[project]\nname = "p"\nversion = "1"\n';

describe("the Python rungs of the ladder", () => {
  it("uv.lock: uv sync when uv is on the provisioning PATH, else pip from pyproject.toml, saying so", () => {
    const worktree = worktreeWith({ "uv.lock": "", "pyproject.toml": PROJECT });
    expect(resolveProvisionCommand({ worktree, searchPath: tool("uv") })).toEqual({
      source: "uv",
      cmd: "uv sync --frozen",
      argv: ["/bin/sh", "-c", "uv sync --frozen"],
    });
    const fallback = resolveProvisionCommand({ worktree, searchPath: tool("other") });
    expect(fallback).toMatchObject({ source: "pip", cmd: "python3 -m venv .venv && .venv/bin/python -m pip install -e ." });
    expect(fallback.argv === null ? "" : fallback.note).toMatch(/^uv\.lock is uv's, and uv is not installed: .*not the locked versions$/);
  });

  it("poetry.lock: poetry install when poetry is there, else pip, saying so", () => {
    const worktree = worktreeWith({ "poetry.lock": "", "pyproject.toml": '[tool.poetry]\nname = "p"\n' });
    expect(resolveProvisionCommand({ worktree, searchPath: tool("poetry") })).toMatchObject({ source: "poetry", cmd: "poetry install --no-interaction" });
    const fallback = resolveProvisionCommand({ worktree, searchPath: tool("other") });
    expect(fallback).toMatchObject({ source: "pip", note: expect.stringMatching(/^poetry\.lock is poetry's, and poetry is not installed/) });
  });

  it("requirements*.txt: every file at the root, then the project itself when it is installable", () => {
    const worktree = worktreeWith({ "requirements.txt": "", "requirements-dev.txt": "", "requirements.in": "", "setup.py": "" });
    expect(resolveProvisionCommand({ worktree, searchPath: "" })).toEqual({
      source: "pip",
      cmd: "python3 -m venv .venv && .venv/bin/python -m pip install -r requirements-dev.txt -r requirements.txt && .venv/bin/python -m pip install -e .",
      argv: ["/bin/sh", "-c", expect.stringContaining("-r requirements-dev.txt -r requirements.txt")],
    });
  });

  it("pyproject.toml: the project with its test extras; a pyproject that only configures tools is no Python rung", () => {
    const extras = worktreeWith({ "pyproject.toml": `${PROJECT}\n[project.optional-dependencies]\ndocs = ["x"]\ntest = ["pytest"]\n"dev" = ["y"]\n` });
    expect(resolveProvisionCommand({ worktree: extras, searchPath: "" }).cmd).toBe("python3 -m venv .venv && .venv/bin/python -m pip install -e '.[test,dev]'");
    expect(resolveProvisionCommand({ worktree: worktreeWith({ "pyproject.toml": "[tool.black]\nline-length = 100\n" }), searchPath: "" }).source).toBe("none");
    // The JavaScript rungs still come first in a mixed repository.
    expect(resolveProvisionCommand({ worktree: worktreeWith({ "pyproject.toml": PROJECT, "package-lock.json": "{}" }), searchPath: "" }).source).toBe("npm");
  });
});

describe("venvEnv", () => {
  it("puts a worktree's .venv first on PATH (suite, baseline, agents), and nothing without one", () => {
    const worktree = worktreeWith({ ".venv/bin/python": { content: "#!/bin/sh\n", mode: 0o755 } });
    expect(venvEnv(worktree, "/usr/bin:/bin")).toEqual({ PATH: `${worktree}/.venv/bin:/usr/bin:/bin`, VIRTUAL_ENV: `${worktree}/.venv` });
    expect(venvEnv(worktreeWith({ ".venv/bin/python": "not executable" }), "/usr/bin")).toEqual({});
    expect(venvEnv(worktreeWith({ "a.txt": "" }), "/usr/bin")).toEqual({});
  });
});

/** Runs the check under a scratch root of its own. */
async function check(options: Omit<CleanCloneOptions, "sandbox">): Promise<CleanCloneResult> {
  return runCleanCloneCheck({ links: [], sandbox: operatorSandbox, scratchRoot: temp("cc-py-root-"), timeoutMs: 120_000, ...options });
}

describe("a Python project in the clean clone", () => {
  it("--provision makes a .venv in the clone, installs the project from the shared pip cache, and the suite tests the clone's broken module", async () => {
    const repo = await repoWith(pythonProject(41));
    const harnessHome = temp("cc-py-home-");
    const result = await check({ repo, command: `cat pip-cache-seen.txt && ${PYTHON_SUITE}`, provision: { config: { env: OFFLINE }, harnessHome } });
    expect(result).toMatchObject({ ran: true, exitCode: 1, provisioned: true });
    // The install saw the shared cache under the harness home.
    expect(result.outputTail).toContain(cacheDir(harnessHome, "pip"));
    // The suite imported the clone's module and found it broken (not "no module named mypkg").
    expect(result.outputTail).toMatch(/AssertionError: 41 != 42/);
    expect(result.outputTail).not.toMatch(/ModuleNotFoundError/);
    expect(result.warnings ?? []).toEqual([]);
    // The same project with the module fixed passes: the venv's interpreter runs the suite.
    write(repo, { "src/mypkg/__init__.py": moduleAnswering(42) });
    const fixed = await check({
      repo,
      command: `${PYTHON_SUITE} && python3 -c "import sys; print(sys.prefix)"`,
      provision: { config: { env: OFFLINE }, harnessHome },
    });
    expect(fixed).toMatchObject({ ran: true, exitCode: 0, provisioned: true });
    expect(fixed.outputTail?.trim().split("\n").pop()).toMatch(/\/clone\/\.venv$/);
  }, 300_000);

  it("warns when the suite imports the package under test from outside the clone (a good copy elsewhere makes the broken module pass)", async () => {
    const repo = await repoWith({ ...pythonProject(41), ".gitignore": ".venv/\n__pycache__/\ninstalled/\n" });
    // An installed copy of the package, outside what the commit holds, that the suite's PYTHONPATH reaches first.
    write(repo, { "installed/mypkg/__init__.py": moduleAnswering(42) });
    const installed = join(repo, "installed");
    // The system's python3 (a python3 under a home on the host's PATH is another test's story).
    const result = await check({ repo, command: `PYTHONPATH=${installed} ${PYTHON_SUITE}`, env: { set: { PATH: "/usr/bin:/bin" } } });
    // The false green itself: the suite passes on a broken commit...
    expect(result).toMatchObject({ ran: true, exitCode: 0 });
    // ...and the result says why it cannot be trusted.
    expect(result.interpreter).toBe("/usr/bin/python3");
    expect(result.warnings).toEqual([
      expect.stringContaining(`the suite imports the package under test 'mypkg' from ${join(installed, "mypkg", "__init__.py")}, outside the clone`),
    ]);
    // A project that is not Python is never probed.
    const plain = await check({ repo: await repoWith({ "a.txt": "a\n" }), command: "true" });
    expect(plain.warnings).toBeUndefined();
  }, 300_000);

  it("--provision never says provisioned after installing nothing", async () => {
    const repo = await repoWith({ "README.md": "nothing to install\n" });
    const result = await check({ repo, command: "true", provision: { harnessHome: temp("cc-py-home-") } });
    expect(result).toMatchObject({ ran: true, exitCode: 0, provisioned: false });
    expect(result.warnings).toEqual([expect.stringMatching(/^provisioning installed nothing: the ladder knows no lockfile or manifest/)]);
  });

  it("a lock whose tool is missing is installed with pip and the result says so", async () => {
    const repo = await repoWith({ ...pythonProject(42), "uv.lock": "version = 1\n" });
    const result = await check({
      repo,
      command: PYTHON_SUITE,
      env: { set: { PATH: "/usr/bin:/bin" } },
      provision: { config: { env: { set: { ...OFFLINE.set, PATH: "/usr/bin:/bin" } } }, harnessHome: temp("cc-py-home-") },
    });
    expect(result).toMatchObject({ ran: true, exitCode: 0, provisioned: true });
    expect(result.warnings).toEqual([expect.stringMatching(/^uv\.lock is uv's, and uv is not installed: the project was installed with pip/)]);
    expect(existsSync(repo) && readdirSync(repo)).not.toContain(".venv");
  }, 300_000);
});
