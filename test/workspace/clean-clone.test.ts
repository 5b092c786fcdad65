import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { execShell } from "../../src/exec/index.js";
import { schemas } from "../../src/schema/index.js";
import {
  CleanCloneOptionsError,
  cleanCloneExitCode,
  runCleanCloneCheck,
  writeCleanCloneResult,
  type CleanCloneOptions,
  type CleanCloneResult,
} from "../../src/workspace/index.js";
import { removeTemps, repoWith, run, temp, write } from "./clean-clone-fixtures.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const sandbox = sandboxFromEnv();

afterAll(removeTemps);

/** Runs the check with a scratch root of its own, writes and re-reads the result, and checks the scratch root is empty again. */
async function check(options: CleanCloneOptions): Promise<CleanCloneResult> {
  const scratchRoot = temp("cc-root-");
  const result = await runCleanCloneCheck({ links: [], ...options, scratchRoot });
  expect(readdirSync(scratchRoot)).toEqual([]);
  const out = join(temp("cc-out-"), "run", "clean-clone-result.json");
  await writeCleanCloneResult(out, result);
  const written: unknown = JSON.parse(readFileSync(out, "utf8"));
  expect(schemas().issues("clean-clone-result", written)).toEqual([]);
  expect(written).toEqual(result);
  return result;
}

/** The suite passes where the target stands. */
async function passesInPlace(repo: string, command: string): Promise<void> {
  const result = await execShell(command, { cwd: repo });
  expect({ exitCode: result.exitCode, tail: result.tail }).toEqual({ exitCode: 0, tail: expect.any(String) });
}

describe("the failure modes the check exists for: passing in the working tree, failing once committed", () => {
  it("a test whose baseline is `git show HEAD:<file>`", async () => {
    const repo = await repoWith({ "data.txt": "v1\n" });
    write(repo, { "data.txt": "v2\n" });
    const command = 'test "$(git show HEAD:data.txt)" != "$(cat data.txt)"';
    await passesInPlace(repo, command);
    const result = await check({ sandbox, repo, command });
    expect(result).toMatchObject({ ran: true, exitCode: 1 });
  });

  it("a test asserting that `git status --porcelain` lists the new test files", async () => {
    const repo = await repoWith({ "src.txt": "code\n" });
    write(repo, { "tests/new.test.sh": "#!/bin/sh\n" });
    const command = "git status --porcelain --untracked-files=all -- tests/ | grep -q new.test.sh";
    await passesInPlace(repo, command);
    expect(await check({ sandbox, repo, command })).toMatchObject({ ran: true, exitCode: 1 });
  });

  it("a test reading a file .gitignore keeps out of the commit", async () => {
    const repo = await repoWith({ ".gitignore": "fixture.local\n", "src.txt": "code\n" });
    write(repo, { "fixture.local": "secret-ish local data\n" });
    const command = "cat fixture.local";
    await passesInPlace(repo, command);
    const result = await check({ sandbox, repo, command });
    expect(result.ran).toBe(true);
    expect(result.exitCode).not.toBe(0);
    expect(result.outputTail).toContain("fixture.local");
  });
});

describe("runCleanCloneCheck", () => {
  it("passes a change that passes in both places, recording the clone's commit", async () => {
    const repo = await repoWith({ "value.txt": "1\n" });
    write(repo, { "value.txt": "2\n", "check.sh": { content: '#!/bin/sh\ntest "$(cat value.txt)" = 2 && echo ok\n', mode: 0o755 } });
    await passesInPlace(repo, "./check.sh");
    const logPath = join(temp("cc-log-"), "logs", "clean-clone.log");
    const result = await check({ sandbox, repo, command: "./check.sh && git log --format=%H -1", logPath });
    expect(result).toMatchObject({ ran: true, exitCode: 0 });
    expect(readFileSync(logPath, "utf8")).toBe(`ok\n${result.commit}\n`);
    expect(result.outputTail).toBe(`ok\n${result.commit}`);
    expect(result.reason).toBeUndefined();
    expect(result.durationMs).toBeGreaterThan(0);
  });

  it("links an ignored node_modules for the suite and keeps it out of the clone's commit", async () => {
    const repo = await repoWith({ ".gitignore": "node_modules/\n", "main.sh": "cat node_modules/dep/index.txt\n" });
    write(repo, { "node_modules/dep/index.txt": "dependency\n", "extra/cache/x": "custom\n", ".gitignore": "node_modules/\nextra/\n" });
    const command = "sh main.sh && cat extra/cache/x && git status --porcelain && git ls-tree -r --name-only HEAD && cat .git/info/exclude | grep '^/'";
    const result = await check({ sandbox, repo, command, links: ["node_modules", "extra/cache", "absent"] });
    expect(result).toMatchObject({ ran: true, exitCode: 0 });
    expect(result.outputTail).toBe("dependency\ncustom\n.gitignore\nmain.sh\n/node_modules\n/extra/cache");
    expect(readFileSync(join(repo, "node_modules/dep/index.txt"), "utf8")).toBe("dependency\n");
  });

  it("links node_modules by default", async () => {
    const repo = await repoWith({ ".gitignore": "node_modules/\n" });
    write(repo, { "node_modules/dep.txt": "dep\n" });
    const result = await runCleanCloneCheck({ sandbox, repo, command: "cat node_modules/dep.txt", scratchRoot: temp("cc-root-") });
    expect(result).toMatchObject({ ran: true, exitCode: 0, outputTail: "dep" });
  });

  it("reports a suite that runs out of time as a run that failed without an exit code, and removes the scratch folder", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const result = await check({ sandbox, repo, command: "echo started; sleep 600", timeoutMs: 2000 });
    expect(result).toMatchObject({ ran: true, timedOut: true, outputTail: "started" });
    expect(result.reason).toBeUndefined();
    expect(result.exitCode).toBeUndefined();
    expect(cleanCloneExitCode(result)).toBe(1);
    expect(result.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it("reports a changed submodule pointer as a clone that could not be built, never as a failed suite", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const sub = join(repo, "sub");
    await run(repo, "init", "-q", sub);
    await run(sub, "commit", "-q", "--allow-empty", "-m", "one");
    await run(repo, "add", "sub");
    await run(repo, "commit", "-q", "-m", "add submodule");
    await run(sub, "commit", "-q", "--allow-empty", "-m", "two");
    const result = await check({ sandbox, repo, command: "true" });
    expect(result.ran).toBe(false);
    expect(result.exitCode).toBeUndefined();
    expect(result.reason).toMatch(/could not be built \(refuse\).*submodule pointer sub/);
  });

  it("reports a repository without a commit, and a folder outside git, as not run", async () => {
    const empty = temp("cc-empty-");
    await run(empty, "init", "-q");
    expect((await check({ sandbox, repo: empty, command: "true" })).reason).toMatch(/\(resolve\): has no commit/);
    const plain = temp("cc-plain-");
    expect((await check({ sandbox, repo: plain, command: "true" })).reason).toMatch(/\(resolve\): is not inside a git working tree/);
    expect((await check({ sandbox, repo: join(plain, "missing"), command: "true" })).reason).toMatch(/is not a directory/);
  });

  it("puts the interpreter's folder first on PATH and records its version", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const result = await check({ sandbox, repo, command: "command -v node", interpreter: process.execPath });
    expect(result).toMatchObject({ ran: true, exitCode: 0, interpreter: process.execPath, interpreterVersion: process.version });
    expect(result.outputTail).toBe(join(dirname(process.execPath), "node"));

    const bin = temp("cc-bin-");
    write(bin, { "python3.99": { content: '#!/bin/sh\necho "Python 3.99.1" >&2\n', mode: 0o755 } });
    const fake = await check({ sandbox, repo, command: "python3.99", interpreter: join(bin, "python3.99"), interpreterFromOperator: true });
    expect(fake).toMatchObject({ ran: true, exitCode: 0, interpreter: join(bin, "python3.99"), interpreterVersion: "Python 3.99.1" });

    const byName = await check({
      sandbox,
      repo,
      command: "true",
      interpreter: "python3.99",
      interpreterFromOperator: true,
      env: { set: { PATH: `${bin}:${process.env.PATH ?? ""}` } },
    });
    expect(byName).toMatchObject({ ran: true, interpreter: join(bin, "python3.99"), interpreterVersion: "Python 3.99.1" });

    const missing = await check({ sandbox, repo, command: "true", interpreter: join(bin, "python2") });
    expect(missing).toMatchObject({ ran: false, interpreter: join(bin, "python2") });
    expect(missing.reason).toMatch(/python2 is not an executable file/);
  });

  it("never hands the App's credentials to the suite, but passes what the caller allows", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const result = await check({ sandbox, repo, command: 'echo "${GITHUB_TOKEN:-none} $EXTRA"', env: { set: { GITHUB_TOKEN: "ghs_secret", EXTRA: "given" } } });
    expect(result.outputTail).toBe("none given");
    // Copied from the harness's environment: only the names allowed, never a credential.
    const planted = { HARNESS_CC_ASKED: "asked", HARNESS_CC_UNASKED: "unasked", PRIVATE_KEY: "-----BEGIN" };
    const saved = Object.fromEntries(Object.keys(planted).map((name) => [name, process.env[name]]));
    Object.assign(process.env, planted);
    try {
      const copied = await check({
        sandbox,
        repo,
        command: 'echo "${HARNESS_CC_ASKED:-none} ${HARNESS_CC_UNASKED:-none} ${PRIVATE_KEY:-none}"',
        env: { allow: ["HARNESS_CC_ASKED", "PRIVATE_KEY"] },
      });
      expect(copied.outputTail).toBe("asked none none");
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("rejects malformed options naming the field", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    await expect(runCleanCloneCheck({ sandbox, repo, command: "true", links: ["ok", "../escape"] })).rejects.toThrow(/links\[1\]/);
    await expect(runCleanCloneCheck({ sandbox, repo, command: " " })).rejects.toBeInstanceOf(CleanCloneOptionsError);
    const scratchRoot = temp("harness-cc-scratch-");
    const head = await run(repo, "rev-parse", "HEAD");
    await expect(runCleanCloneCheck({ sandbox, repo, command: "true", timeoutMs: 0, scratchRoot })).rejects.toThrow(/timeoutMs/);
    // Refused before any work: no scratch clone was made, and the repository is as it was.
    expect(readdirSync(scratchRoot)).toEqual([]);
    expect(await run(repo, "rev-parse", "HEAD")).toBe(head);
    expect(await run(repo, "status", "--porcelain", "--untracked-files=all")).toBe("");
  });
});

describe("writeCleanCloneResult", () => {
  it("refuses a result its schema does not allow, naming the file and the key", async () => {
    const out = join(temp("cc-out-"), "clean-clone-result.json");
    const bad = { ran: true, command: "npm test", durationMs: 3 } as CleanCloneResult;
    await expect(writeCleanCloneResult(out, bad)).rejects.toThrow(/clean-clone-result\.json: \$ must have required key 'exitCode'/);
    const withNull = { ran: false, command: "npm test", durationMs: 3, reason: "x", exitCode: null } as unknown as CleanCloneResult;
    await expect(writeCleanCloneResult(out, withNull)).rejects.toThrow(/\$\.exitCode/);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dirname(out))).toEqual([]);
  });
});

describe("clean-clone-result schema", () => {
  it.each([
    [{ ran: true, command: "t", durationMs: 1, exitCode: 0, outputTail: "", commit: "a".repeat(40), timedOut: true }, "$"],
    [{ ran: false, command: "t", durationMs: 1, reason: "r", timedOut: true }, "$"],
    [{ ran: false, command: "t", durationMs: 1, reason: "r", interpreterVersion: "v1" }, "$"],
    [{ ran: true, command: "t", durationMs: 1, exitCode: 0, outputTail: "", commit: "a".repeat(40), reason: "r" }, "$"],
    [{ ran: false, command: "", durationMs: 1, reason: "r" }, "$.command"],
  ])("refuses %j at %s", (data, path) => {
    expect(
      schemas()
        .issues("clean-clone-result", data)
        .map((issue) => issue.path),
    ).toContain(path);
  });
});
