/**
 * The baseline kept per (base commit, lockfile hash, test command, sandbox policy): the next
 * story on the same base reads it instead of running the suite; a red base still blocks; a
 * corrupt or stale entry is ignored and rewritten; two stories at once leave one entry.
 */
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  baselineCachePath,
  lockfileHash,
  lockfileHashAt,
  pruneCachedBaselines,
  readCachedBaseline,
  writeCachedBaseline,
  type BaselineKey,
} from "../../src/pipeline/baseline-cache.js";
import { schemas } from "../../src/schema/index.js";
import { git } from "../../src/workspace/index.js";
import { commitAll, initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";
import { launches, makeScenario, ofKind, q, runScenario, scriptedConfig, type Scenario } from "./helpers.js";

afterAll(removeTempDirs);

/** A suite that logs each run (in the folder the scenario's sandbox lets steps write) and then runs `then`. */
function countedSuite(s: Scenario, then: string): { test: string; runs: () => number } {
  const log = join(dirname(s.launches), "suite-runs");
  return {
    test: `echo run >> ${q(log)}; ${then}`,
    runs: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0),
  };
}

const story = (id: string) => ({ story: { id, title: "Greet the user", body: "Write feature.txt saying hello." }, branch: `harness/story-${id}` });

function entries(home: string): string[] {
  const dir = join(home, "baselines");
  return existsSync(dir) ? readdirSync(dir) : [];
}

describe("the baseline kept per base", () => {
  it("is not run again by a second story on the same base (real git, a real suite)", async () => {
    const s = await makeScenario();
    const suite = countedSuite(s, "test -f feature.txt");
    const first = await runScenario(s, scriptedConfig(s, "complete", { test: suite.test }), story("one"));
    expect(first.outcome.status).toBe("completed");
    expect(ofKind(first.journal, "baseline.finished")[0]).toMatchObject({ exitCode: 1 });
    expect(ofKind(first.journal, "baseline.finished")[0]?.cached).toBeUndefined();
    const runsOfFirst = suite.runs();

    const second = await runScenario(s, scriptedConfig(s, "complete", { test: suite.test }), story("two"));
    expect(second.outcome.status).toBe("completed");
    expect(ofKind(second.journal, "baseline.finished")[0]).toMatchObject({
      exitCode: 1,
      cached: true,
      commit: await git(["rev-parse", "main"], { cwd: s.repo }),
    });
    // The same gates ran, all but the baseline.
    expect(suite.runs() - runsOfFirst).toBe(runsOfFirst - 1);
    expect(entries(s.home)).toHaveLength(1);

    // Another test command is another key: run again.
    const other = countedSuite(s, "test -f feature.txt && true");
    await runScenario(s, scriptedConfig(s, "complete", { test: other.test }), story("three"));
    expect(entries(s.home)).toHaveLength(2);
  });

  it("still blocks a red base as baseline-red, before the tester's retry, when the result is read back", async () => {
    const s = await makeScenario();
    const test = "echo 'FAIL test/legacy.test.js: expected 1, received 2 (12 ms)'; exit 1";
    await runScenario(s, scriptedConfig(s, "complete", { test }), story("one"));
    const before = launches(s).length;
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "complete", { test }), story("two"));
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "baseline-red" });
    expect(ofKind(journal, "baseline.finished")[0]).toMatchObject({ cached: true, exitCode: 1 });
    expect(launches(s).slice(before)).toEqual(["implementer 1", "tester 1"]);
  });

  it("ignores and rewrites a corrupt entry, and one whose key is not the one asked for", async () => {
    const s = await makeScenario();
    const suite = countedSuite(s, "test -f feature.txt");
    await runScenario(s, scriptedConfig(s, "complete", { test: suite.test }), story("one"));
    const [name] = entries(s.home);
    const file = join(s.home, "baselines", name ?? "");
    const good = readFileSync(file, "utf8");

    writeFileSync(file, good.slice(0, 50));
    const corrupt = await runScenario(s, scriptedConfig(s, "complete", { test: suite.test }), story("two"));
    expect(ofKind(corrupt.journal, "baseline.finished")[0]?.cached).toBeUndefined();
    expect(schemas().parseValid("baseline-cache", readFileSync(file, "utf8"))).toBeDefined();

    // A valid entry about another commit (a base force-pushed away) under this key's file: not this base's answer.
    writeFileSync(file, good.replace(/"commit":"[0-9a-f]{40}"/, `"commit":"${"f".repeat(40)}"`).replace('"exitCode":1', '"exitCode":0'));
    const stale = await runScenario(s, scriptedConfig(s, "complete", { test: suite.test }), story("three"));
    expect(ofKind(stale.journal, "baseline.finished")[0]).toMatchObject({ exitCode: 1 });
    expect(ofKind(stale.journal, "baseline.finished")[0]?.cached).toBeUndefined();
    expect(readFileSync(file, "utf8")).not.toContain("f".repeat(40));
  });

  it("leaves one entry when two stories on the same base start at once", async () => {
    const s = await makeScenario();
    const suite = countedSuite(s, "test -f feature.txt");
    const config = scriptedConfig(s, "complete", { test: suite.test });
    const [one, two] = await Promise.all([runScenario(s, config, story("one")), runScenario(s, config, story("two"))]);
    expect([one.outcome.status, two.outcome.status]).toEqual(["completed", "completed"]);
    // One of them ran it; the other shared that run.
    const cached = [one, two].map((run) => ofKind(run.journal, "baseline.finished")[0]?.cached === true);
    expect(cached.sort()).toEqual([false, true]);
    expect(entries(s.home)).toHaveLength(1);
    expect(readdirSync(join(s.home, "baselines")).filter((file) => file.endsWith(".tmp"))).toEqual([]);
  });
});

describe("the baseline entry", () => {
  const key = (overrides: Partial<BaselineKey> = {}): BaselineKey => ({
    commit: "a".repeat(40),
    lockfileHash: lockfileHash(makeTempDir()),
    command: "npm test",
    policy: { sandboxed: true, network: false, net: "none" },
    ...overrides,
  });

  it("is keyed by the lockfile's content and the sandbox policy too", () => {
    const home = makeTempDir();
    const root = makeTempDir();
    const emptyHash = lockfileHash(root);
    writeFileSync(join(root, "package-lock.json"), '{"lockfileVersion":3}\n');
    expect(lockfileHash(root)).not.toBe(emptyHash);
    writeCachedBaseline(home, key(), { exitCode: 0, outputTail: "ok\n", durationMs: 5, counts: { node: 2 } });
    expect(readCachedBaseline(home, key())).toEqual({ exitCode: 0, outputTail: "ok\n", durationMs: 5, counts: { node: 2 } });
    expect(readCachedBaseline(home, key({ lockfileHash: lockfileHash(root) }))).toBeUndefined();
    expect(readCachedBaseline(home, key({ policy: { sandboxed: false, network: false, net: "none" } }))).toBeUndefined();
    expect(baselineCachePath(home, key())).not.toBe(baselineCachePath(home, key({ command: "npm test -- --ci" })));
  });

  it("is the same read from a commit's objects as from a checkout of it (the key of a base no worktree holds)", async () => {
    const repo = makeTempDir();
    const bare = await initRepo(repo, { "README.md": "# demo\n" });
    expect(await lockfileHashAt(repo, bare ?? "HEAD")).toBe(lockfileHash(repo));
    expect(lockfileHash(repo)).toBe(lockfileHash(makeTempDir()));
    writeFileSync(join(repo, "package-lock.json"), '{"lockfileVersion":3}\n');
    writeFileSync(join(repo, "Cargo.lock"), "version = 3\n");
    const locked = await commitAll(repo, "lockfiles");
    expect(lockfileHash(repo)).not.toBe(lockfileHash(makeTempDir()));
    expect(await lockfileHashAt(repo, locked)).toBe(lockfileHash(repo));
    expect(await lockfileHashAt(repo, bare ?? "HEAD")).not.toBe(lockfileHash(repo));
  });

  it("refuses a version it does not know, and a version-1 entry (no counts: its tail may under-count)", () => {
    const home = makeTempDir();
    writeCachedBaseline(home, key(), { exitCode: 0, outputTail: "", durationMs: 1, counts: {} });
    const file = baselineCachePath(home, key());
    const good = readFileSync(file, "utf8");
    expect(readCachedBaseline(home, key())).toEqual({ exitCode: 0, outputTail: "", durationMs: 1, counts: {} });
    writeFileSync(file, good.replace('"version":2', '"version":3'));
    expect(readCachedBaseline(home, key())).toBeUndefined();
    writeFileSync(file, good.replace('"version":2', '"version":1').replace(',"counts":{}', ""));
    expect(readCachedBaseline(home, key())).toBeUndefined();
  });

  it("is removed by housekeeping once no story used it for the retention period; a read counts as a use", () => {
    const home = makeTempDir();
    const days = (n: number) => new Date(Date.now() - n * 24 * 60 * 60_000);
    const result = { exitCode: 0, outputTail: "", durationMs: 1, counts: {} };
    const [used, unused, fresh] = ["used", "unused", "fresh"].map((command) => key({ command })) as [BaselineKey, BaselineKey, BaselineKey];
    for (const k of [used, unused, fresh]) writeCachedBaseline(home, k, result);
    for (const k of [used, unused]) utimesSync(baselineCachePath(home, k), days(30), days(30));
    // Read now: its age starts again.
    expect(readCachedBaseline(home, used)).toEqual(result);
    expect(statSync(baselineCachePath(home, used)).mtimeMs).toBeGreaterThan(days(1).getTime());

    expect(pruneCachedBaselines(home, 14)).toEqual([baselineCachePath(home, unused)]);
    expect(readCachedBaseline(home, unused)).toBeUndefined();
    expect(readCachedBaseline(home, used)).toEqual(result);
    expect(readCachedBaseline(home, fresh)).toEqual(result);
    expect(pruneCachedBaselines(makeTempDir(), 14)).toEqual([]);
  });
});
