/**
 * The clean-clone check's own flow (check.ts), on small real repositories: what each branch of
 * it records in the result, that every failure before or during the suite is "did not run"
 * (labelled "internal error" when it is the harness's own fault), and that the scratch folder
 * is made under the caller's root and removed whatever happened.
 */
import { readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { type Sandbox, sandboxFromEnv } from "../../src/sandbox/index.js";
import { runCleanCloneCheck, type CleanCloneOptions, type CleanCloneResult } from "../../src/workspace/index.js";
import { removeTemps, repoWith, temp, write } from "./clean-clone-fixtures.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const operatorSandbox = sandboxFromEnv();

afterAll(removeTemps);

/** Runs the check under a scratch root of its own, which must be empty again afterwards. */
async function check(options: CleanCloneOptions): Promise<CleanCloneResult> {
  const scratchRoot = temp("cc-check-root-");
  const result = await runCleanCloneCheck({ links: [], ...options, scratchRoot });
  expect(readdirSync(scratchRoot)).toEqual([]);
  return result;
}

/** A sandbox port whose every step fails the way a fault of the harness would. */
const broken = (thrown: unknown): Sandbox => ({ run: () => Promise.reject(thrown) }) as unknown as Sandbox;

describe("runCleanCloneCheck's result", () => {
  it("runs the suite in a scratch folder under the caller's root, recording the depth, the links and the time taken", async () => {
    const repo = await repoWith({ ".gitignore": "deps/\n", "a.txt": "a\n" });
    write(repo, { "deps/d.txt": "d\n" });
    const scratchRoot = temp("cc-check-root-");
    const before = performance.now();
    const result = await runCleanCloneCheck({
      sandbox: operatorSandbox,
      repo,
      command: 'case "$PWD" in "$ROOT"/harness-clean-clone-*/clone) echo under-root;; esac; git rev-parse --is-shallow-repository',
      links: ["deps"],
      depth: 1,
      scratchRoot,
      env: { set: { ROOT: scratchRoot } },
    });
    const wall = performance.now() - before;
    expect(Object.keys(result)).toEqual(["ran", "command", "exitCode", "outputTail", "durationMs", "commit", "depth", "linked"]);
    expect(result).toMatchObject({ ran: true, exitCode: 0, outputTail: "under-root\ntrue", depth: 1, linked: ["deps"] });
    // The check's own time: more than nothing, and no more than the call took.
    expect(result.durationMs).toBeGreaterThan(0);
    expect(result.durationMs).toBeLessThanOrEqual(Math.ceil(wall));
    expect(readdirSync(scratchRoot)).toEqual([]);
  });

  it("records the targeted interpreter, resolved on the caller's PATH, and its version", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const bin = temp("cc-check-bin-");
    write(bin, { "python3.99": { content: '#!/bin/sh\necho "Python 3.99.5"\n', mode: 0o755 } });
    const result = await check({
      sandbox: operatorSandbox,
      repo,
      command: "true",
      interpreter: "python3.99",
      interpreterFromOperator: true,
      env: { set: { PATH: `${bin}:/usr/bin:/bin` } },
    });
    expect(result).toMatchObject({ ran: true, exitCode: 0, interpreter: join(bin, "python3.99"), interpreterVersion: "Python 3.99.5" });
    expect(result.warnings).toEqual([expect.stringMatching(/^could not tell which interpreter the command invokes/)]);
  });

  it("did not run with an interpreter it cannot use, naming it as asked or as resolved", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const missing = await check({ sandbox: operatorSandbox, repo, command: "true", interpreter: "python-nowhere", env: { set: { PATH: "/usr/bin:/bin" } } });
    expect(missing).toEqual({
      ran: false,
      command: "true",
      interpreter: "python-nowhere",
      durationMs: expect.any(Number),
      reason: "interpreter python-nowhere was not found on PATH",
    });
    const bin = temp("cc-check-bin-");
    write(bin, { mute: { content: "#!/bin/sh\nexit 9\n", mode: 0o755 } });
    const mute = await check({
      sandbox: operatorSandbox,
      repo,
      command: "true",
      interpreter: join(bin, "mute"),
      interpreterFromOperator: true,
      env: { allow: ["HOME"] },
    });
    // Its version is asked in the built clone's sandbox, so the clone's links are already known.
    expect(mute).toEqual({
      ran: false,
      command: "true",
      interpreter: join(bin, "mute"),
      linked: [],
      durationMs: expect.any(Number),
      reason: `interpreter ${join(bin, "mute")} could not report its version (--version exited 9)`,
    });
  });

  it("did not run when the clone cannot be built, with the build error as the reason", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    symlinkSync("/etc/hosts", join(repo, "hosts"));
    const refused = await check({ sandbox: operatorSandbox, repo, command: "true" });
    expect(Object.keys(refused)).toEqual(["ran", "command", "durationMs", "reason"]);
    expect(refused.reason).toMatch(new RegExp(`^clean clone of ${repo} could not be built \\(refuse\\): the commit cannot be checked out`));
    const allowed = await check({ sandbox: operatorSandbox, repo, command: "readlink hosts", allowExternalSymlinks: true });
    expect(allowed).toMatchObject({ ran: true, exitCode: 0, outputTail: "/etc/hosts", warnings: [expect.stringMatching(/the symlink hosts .* \(allowed\)$/)] });
  });

  it("labels a fault of the harness itself as an internal error, and still removes the scratch folder", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const thrown = await check({ repo, command: "true", sandbox: broken(new Error("the sandbox fell over")) });
    expect(thrown).toMatchObject({ ran: false, reason: "internal error: the sandbox fell over" });
    const text = await check({ repo, command: "true", sandbox: broken("not an error object") });
    expect(text).toMatchObject({ ran: false, reason: "internal error: not an error object" });
  });
});

describe("runCleanCloneCheck with provisioning", () => {
  it("installs afresh in the clone, linking nothing, logging where the caller asks", async () => {
    const repo = await repoWith({ ".gitignore": "node_modules/\n", "package.json": "{}\n" });
    write(repo, { "node_modules/marker": "linked\n" });
    const harnessHome = temp("cc-check-home-");
    const logPath = join(temp("cc-check-log-"), "provision.log");
    const result = await check({
      sandbox: operatorSandbox,
      repo,
      command: "cat node_modules/marker",
      links: ["node_modules"],
      logPath,
      provision: { config: { command: 'mkdir -p node_modules && echo "$YARN_CACHE_FOLDER" > node_modules/marker && echo installed-here' }, harnessHome },
    });
    expect(result).toMatchObject({ ran: true, exitCode: 0, linked: [], provisioned: true });
    // Installed with the caller's harness home (its package caches), the install's words in the caller's log.
    expect(result.outputTail?.startsWith(harnessHome)).toBe(true);
    expect(readFileSync(logPath, "utf8")).toContain("installed-here");
    // Without a log named, the install logs in the scratch folder.
    expect(await check({ sandbox: operatorSandbox, repo, command: "true", provision: { config: { command: "true" }, harnessHome } })).toMatchObject({
      ran: true,
      provisioned: true,
    });
  });

  it("did not run when provisioning fails, and calls a configuration the ladder refuses an internal error", async () => {
    const repo = await repoWith({ "a.txt": "a\n" });
    const harnessHome = temp("cc-check-home-");
    const failing = await check({ sandbox: operatorSandbox, repo, command: "true", provision: { config: { command: "exit 7" }, harnessHome } });
    expect(failing).toMatchObject({ ran: false });
    expect(failing.reason).toMatch(new RegExp(`^clean clone of ${repo} could not be built \\(provision\\): (?!internal error)`));
    expect(failing.provisioned).toBeUndefined();
    const invalid = await check({ sandbox: operatorSandbox, repo, command: "true", provision: { config: { command: 42 } as never, harnessHome } });
    expect(invalid.reason).toMatch(new RegExp(`^clean clone of ${repo} could not be built \\(provision\\): internal error: `));
    // The install runs in the caller's sandbox too.
    const boxed = await check({
      repo,
      command: "true",
      sandbox: broken(new Error("the sandbox fell over")),
      provision: { config: { command: "true" }, harnessHome },
    });
    expect(boxed.reason).toBe(`clean clone of ${repo} could not be built (provision): internal error: the sandbox fell over`);
  });
});
