import { mkdirSync, readdirSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { exec } from "../../src/exec/index.js";
import { dirname, join } from "node:path";
import { schemas } from "../../src/schema/index.js";
import { runCleanCloneCheck, type CleanCloneOptions, type CleanCloneResult } from "../../src/workspace/index.js";
import { removeTemps, repoWith, run, temp, workingTreeTree, write } from "./clean-clone-fixtures.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const sandbox = sandboxFromEnv();

afterAll(removeTemps);

/** Runs the check with its own scratch root; the result must fit its schema and the root be empty again. */
async function check(options: CleanCloneOptions): Promise<CleanCloneResult> {
  const scratchRoot = temp("cc-root-");
  const result = await runCleanCloneCheck({ links: [], ...options, scratchRoot });
  expect(readdirSync(scratchRoot)).toEqual([]);
  expect(schemas().issues("clean-clone-result", result)).toEqual([]);
  return result;
}

/** A repository with three commits on main and an uncommitted edit. */
async function threeCommits(): Promise<string> {
  const repo = await repoWith({ "v.txt": "1\n" });
  for (const value of ["2", "3"]) {
    write(repo, { "v.txt": `${value}\n` });
    await run(repo, "commit", "-q", "-am", `v${value}`);
  }
  write(repo, { "v.txt": "4\n" });
  return repo;
}

describe("CI parity", () => {
  it("--depth: the clone holds only the last n commits, the story's own commit first", async () => {
    const repo = await threeCommits();
    const shallow = await check({
      sandbox,
      repo,
      depth: 1,
      command: "git rev-parse --is-shallow-repository; git rev-list --count HEAD; cat v.txt; git symbolic-ref --short HEAD",
    });
    expect(shallow).toMatchObject({ ran: true, exitCode: 0, depth: 1, outputTail: "true\n1\n4\nmain" });
    // A test that walks history to a baseline fails here as it would in CI.
    const baseline = await check({ sandbox, repo, depth: 1, command: "git show HEAD~1:v.txt" });
    expect(baseline).toMatchObject({ ran: true, depth: 1 });
    expect(baseline.exitCode).not.toBe(0);
    const two = await check({ sandbox, repo, depth: 2, command: "git rev-list --count HEAD; git show HEAD~1:v.txt" });
    expect(two).toMatchObject({ ran: true, exitCode: 0, depth: 2, outputTail: "2\n3" });
    const full = await check({ sandbox, repo, command: "git rev-parse --is-shallow-repository; git rev-list --count HEAD" });
    expect(full).toMatchObject({ ran: true, exitCode: 0, outputTail: "false\n4" });
    expect(full.depth).toBeUndefined();
  });

  it("--depth on a detached HEAD checks out the commit detached", async () => {
    const repo = await threeCommits();
    await run(repo, "checkout", "-q", "--detach");
    const expected = await workingTreeTree(repo);
    const result = await check({
      sandbox,
      repo,
      depth: 1,
      command: "git symbolic-ref -q HEAD || echo detached; git rev-parse HEAD^{tree}; git rev-list --count HEAD",
    });
    expect(result).toMatchObject({ ran: true, exitCode: 0, depth: 1, outputTail: `detached\n${expected}\n1` });
  });

  it("sets CI=true unless the caller sets CI, and passes exactly the variables the caller allows", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    process.env.CC_PARITY_ALLOWED = "allowed-value";
    process.env.CC_PARITY_OTHER = "other-value";
    try {
      const result = await check({
        sandbox,
        repo,
        command: 'echo "$CI ${CC_PARITY_ALLOWED:-absent} ${CC_PARITY_OTHER:-absent}"',
        env: { allow: ["CC_PARITY_ALLOWED"] },
      });
      expect(result.outputTail).toBe("true allowed-value absent");
      const overridden = await check({ sandbox, repo, command: 'echo "$CI"', env: { set: { CI: "false" } } });
      expect(overridden.outputTail).toBe("false");
    } finally {
      delete process.env.CC_PARITY_ALLOWED;
      delete process.env.CC_PARITY_OTHER;
    }
  });

  it("the clone never starts background git work (gc.auto=0, maintenance.auto=false)", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    for (const depth of [undefined, 1]) {
      const result = await check({ sandbox, repo, command: "git config --local gc.auto; git config --local maintenance.auto", ...(depth ? { depth } : {}) });
      expect(result).toMatchObject({ ran: true, exitCode: 0, outputTail: "0\nfalse" });
    }
  });
});

describe("linked folders tell the truth", () => {
  it("lists what was linked", async () => {
    const repo = await repoWith({ ".gitignore": "node_modules/\n", "a.txt": "a\n" });
    write(repo, { "node_modules/dep/index.js": "module.exports = 1;\n" });
    const result = await runCleanCloneCheck({ sandbox, repo, command: "test -f node_modules/dep/index.js" });
    expect(result).toMatchObject({ ran: true, exitCode: 0, linked: ["node_modules"] });
    const none = await check({ sandbox, repo, command: "true" });
    expect(none.linked).toEqual([]);
  });

  it("refuses a node_modules whose workspace package links back into the target's tree, naming it", async () => {
    const repo = await repoWith({ ".gitignore": "node_modules/\n", "packages/lib/index.js": "exports.v = 1;\n" });
    mkdirSync(join(repo, "node_modules", "@scope"), { recursive: true });
    symlinkSync("../../packages/lib", join(repo, "node_modules", "@scope", "lib"));
    const result = await check({ sandbox, repo, command: "true", links: ["node_modules"] });
    expect(result.ran).toBe(false);
    expect(result.reason).toMatch(
      /could not be built \(link\).*node_modules\/@scope\/lib is a symlink to packages\/lib in the target's own tree.*clean_clone\.provision: true/,
    );
  });

  it("refuses a .venv whose editable install points at the target's src (.pth, direct_url.json), naming the file", async () => {
    const repo = await repoWith({ ".gitignore": ".venv/\n", "src/pkg/__init__.py": "" });
    const site = join(repo, ".venv", "lib", "python3.12", "site-packages");
    write(site, { "ordinary.pth": `${join(repo, ".venv", "lib", "extra")}\n` });
    expect((await check({ sandbox, repo, command: "true", links: [".venv"] })).ran).toBe(true);
    write(site, { "__editable__.pkg-0.1.pth": `${join(repo, "src")}\n` });
    const pth = await check({ sandbox, repo, command: "true", links: [".venv"] });
    expect(pth.reason).toMatch(/\.venv\/lib\/python3\.12\/site-packages\/__editable__\.pkg-0\.1\.pth points at src in the target's own tree/);

    const other = await repoWith({ ".gitignore": ".venv/\n", "a.txt": "a\n" });
    const otherSite = join(other, ".venv", "lib", "python3.11", "site-packages");
    write(otherSite, { "pkg-0.1.dist-info/direct_url.json": JSON.stringify({ url: `file://${other}`, dir_info: { editable: true } }) });
    const direct = await check({ sandbox, repo: other, command: "true", links: [".venv"] });
    expect(direct.reason).toMatch(/pkg-0\.1\.dist-info\/direct_url\.json points at \. in the target's own tree/);
  });

  // Before the bounded reader, the check's read of the FIFO waited for a writer for good (the test timed out).
  it("a FIFO named x.pth in a linked .venv does not hang the check: it is no record, and the suite runs", async () => {
    const repo = await repoWith({ ".gitignore": ".venv/\n", "a.txt": "a\n" });
    const site = join(repo, ".venv", "lib", "python3.12", "site-packages");
    mkdirSync(site, { recursive: true });
    expect((await exec(["mkfifo", join(site, "x.pth")], { cwd: repo })).exitCode).toBe(0);
    const result = await check({ sandbox, repo, command: "cat a.txt", links: [".venv"] });
    expect(result).toMatchObject({ ran: true, exitCode: 0, outputTail: "a" });
  });

  it("refuses a .venv whose .pth is a symlink (Python follows it, the check does not) or too large to check", async () => {
    const repo = await repoWith({ ".gitignore": ".venv/\n", "a.txt": "a\n" });
    const site = join(repo, ".venv", "lib", "python3.12", "site-packages");
    write(repo, { "notes/where.txt": `${join(repo, "src")}\n` });
    mkdirSync(site, { recursive: true });
    symlinkSync(join(repo, "notes", "where.txt"), join(site, "x.pth"));
    const linked = await check({ sandbox, repo, command: "true", links: [".venv"] });
    expect(linked.reason).toMatch(/site-packages\/x\.pth is a symlink, which is not followed, so it cannot be checked/);
    rmSync(join(site, "x.pth"));
    writeFileSync(join(site, "x.pth"), "");
    truncateSync(join(site, "x.pth"), 1024 ** 3);
    const huge = await check({ sandbox, repo, command: "true", links: [".venv"] });
    expect(huge.reason).toMatch(/site-packages\/x\.pth is larger than 1048576 bytes \(1073741824\), so it cannot be checked/);
  });

  it("provisions the clone afresh instead of linking when asked", async () => {
    const repo = await repoWith({ ".gitignore": "node_modules/\n", "a.txt": "a\n" });
    write(repo, { "node_modules/marker": "linked from the target\n" });
    const harnessHome = temp("cc-home-");
    const result = await check({
      sandbox,
      repo,
      command: "cat node_modules/marker; test -L node_modules || echo not-a-link",
      links: ["node_modules"],
      provision: { config: { command: "mkdir -p node_modules && echo provisioned > node_modules/marker" }, harnessHome },
    });
    expect(result).toMatchObject({ ran: true, exitCode: 0, provisioned: true, linked: [], outputTail: "provisioned\nnot-a-link" });
    const failing = await check({ sandbox, repo, command: "true", provision: { config: { command: "exit 7" }, harnessHome } });
    expect(failing).toMatchObject({ ran: false });
    expect(failing.reason).toMatch(/could not be built \(provision\)/);
  });
});

describe("the interpreter tells the truth", () => {
  /** A fake interpreter: answers --version with `version`, runs nothing else. */
  function fakeInterpreter(dir: string, name: string, version: string): string {
    write(dir, { [name]: { content: `#!/bin/sh\nif [ "$1" = --version ]; then echo "${version}"; fi\nexit 0\n`, mode: 0o755 } });
    return join(dir, name);
  }

  it("records what a command naming its interpreter by path invokes, and warns that it is not the targeted one", async () => {
    const repo = await repoWith({ ".gitignore": ".venv/\n", "test_a.py": "" });
    fakeInterpreter(join(repo, ".venv", "bin"), "python", "Python 3.13.0");
    const targeted = fakeInterpreter(temp("cc-bin-"), "python3.10", "Python 3.10.13");
    const result = await check({
      sandbox,
      repo,
      command: ".venv/bin/python -m pytest",
      interpreter: targeted,
      interpreterFromOperator: true,
      links: [".venv"],
    });
    expect(result).toMatchObject({ ran: true, exitCode: 0, interpreter: ".venv/bin/python", interpreterVersion: "Python 3.13.0", linked: [".venv"] });
    expect(result.warnings).toEqual([
      expect.stringMatching(
        /invokes \.venv\/bin\/python \(Python 3\.13\.0\), not the targeted interpreter .*python3\.10 \(Python 3\.10\.13\).*names it by path/,
      ),
    ]);

    const same = await check({ sandbox, repo, command: "python3.10 -m pytest", interpreter: targeted, interpreterFromOperator: true });
    expect(same).toMatchObject({ ran: true, interpreter: targeted, interpreterVersion: "Python 3.10.13" });
    expect(same.warnings).toBeUndefined();
  });

  it("follows a script's #! line, and records the invoked interpreter when none is targeted", async () => {
    const repo = await repoWith({ "run-tests": { content: "#!/usr/bin/env node\nprocess.exit(0);\n", mode: 0o755 } });
    const bin = dirname(process.execPath);
    const result = await check({ sandbox, repo, command: "./run-tests", env: { set: { PATH: `${bin}:${process.env.PATH ?? ""}` } } });
    expect(result).toMatchObject({ ran: true, exitCode: 0, interpreter: join(bin, "node"), interpreterVersion: process.version });
  });

  it("warns when it cannot tell what the command invokes under a targeted interpreter", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const result = await check({ sandbox, repo, command: "if true; then true; fi", interpreter: process.execPath });
    expect(result).toMatchObject({ ran: true, exitCode: 0, interpreter: process.execPath, interpreterVersion: process.version });
    expect(result.warnings).toEqual([expect.stringMatching(/could not tell which interpreter the command invokes/)]);
  });
});

describe("external symlinks", () => {
  it("are refused by default and let through, with a warning, when the operator allows them", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const outside = join(temp("cc-outside-"), "data.txt");
    writeFileSync(outside, "outside\n");
    symlinkSync(outside, join(repo, "data.txt"));
    symlinkSync("../../elsewhere", join(repo, "up"));
    const refused = await check({ sandbox, repo, command: "cat data.txt" });
    expect(refused.ran).toBe(false);
    expect(refused.reason).toContain(`the symlink data.txt points to ${JSON.stringify(outside)}, an absolute path outside the repository`);
    expect(refused.reason).toContain('the symlink up points to "../../elsewhere", a path above the repository root');
    // Let through as a link; what it points to is outside the sandbox's view, as it is in CI.
    const allowed = await check({ sandbox, repo, command: "readlink data.txt", allowExternalSymlinks: true });
    expect(allowed).toMatchObject({ ran: true, exitCode: 0, outputTail: outside });
    expect(allowed.warnings).toHaveLength(2);
  });
});
