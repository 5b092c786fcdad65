/**
 * The integrity gate's "fewer tests run" count against the right baseline: a re-admitted story
 * (its worktree starts from the commit the blocked run left) is compared with the base's count,
 * never with the blocked attempt's; and a baseline read back from the cache still has the count
 * of a real `go test -v` run whose per-test lines are long gone from the kept tail.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { git } from "../../src/workspace/index.js";
import { removeTempDirs } from "../support/tmp.js";
import { makeScenario, ofKind, runScenario, scriptedConfig } from "./helpers.js";

afterAll(removeTempDirs);

const MATH = 'import test from "node:test";\nimport assert from "node:assert";\n\ntest("adds", () => {\n  assert.equal(1 + 2, 3);\n});\n';
const OTHER = 'import test from "node:test";\nimport assert from "node:assert";\n\ntest("holds", () => {\n  assert.ok(true);\n});\n';
const story = { story: { id: "demo", title: "Greet the user", body: "Write feature.txt saying hello." }, branch: "harness/story-demo" };

describe("a re-admitted story's test count", () => {
  async function blockedStory() {
    const s = await makeScenario({ "test/math.test.mjs": MATH, "test/other.test.mjs": OTHER });
    const main = await git(["rev-parse", "HEAD"], { cwd: s.repo });
    const first = await runScenario(s, { ...scriptedConfig(s, "delete-test", { test: "node --test" }), maxAttempts: 1 }, { ...story, integrityBase: main });
    expect(first.outcome).toMatchObject({ status: "blocked", failureClass: "test-integrity" });
    // The blocked attempt's work is on the story branch: the re-admission's worktree starts there, one test short.
    const blocked = await git(["rev-parse", "harness/story-demo"], { cwd: s.repo });
    expect(blocked).not.toBe(main);
    return { s, main, blocked };
  }

  it("is compared with the base's baseline, not with the blocked commit's (accept-integrity re-admits it)", async () => {
    const { s, main, blocked } = await blockedStory();
    const again = await runScenario(
      s,
      { ...scriptedConfig(s, "complete", { test: "node --test" }), maxAttempts: 1 },
      {
        ...story,
        integrityBase: main,
        readmission: true,
        acceptIntegrity: "octocat",
      },
    );
    expect(again.outcome.status).toBe("completed");
    // Its own baseline ran on the blocked commit and counted one test...
    expect(ofKind(again.journal, "baseline.finished")[0]).toMatchObject({ commit: blocked });
    const [gate] = ofKind(again.journal, "integrity.finished");
    // ...but the gate compared the clean clone with the base's two, and the writer accepted the difference.
    expect(gate).toMatchObject({ base: main, counts: { compared: true, base: { node: 2 }, head: { node: 1 } }, findings: [] });
    expect(gate?.accepted.map((finding) => `${finding.kind} ${finding.acceptedBy}`)).toEqual(["test-file-deleted octocat", "fewer-tests-run octocat"]);
  });

  it("is not compared, saying why, when no baseline of the base is left to compare with", async () => {
    const { s, main, blocked } = await blockedStory();
    rmSync(join(s.home, "baselines"), { recursive: true, force: true });
    const again = await runScenario(
      s,
      { ...scriptedConfig(s, "complete", { test: "node --test" }), maxAttempts: 1 },
      { ...story, integrityBase: main, readmission: true },
    );
    expect(again.outcome).toMatchObject({ status: "blocked", failureClass: "test-integrity" });
    const [gate] = ofKind(again.journal, "integrity.finished");
    expect(gate?.findings.map((finding) => finding.kind)).toEqual(["test-file-deleted"]);
    expect(gate?.counts).toEqual({
      compared: false,
      reason: `the baseline ran on ${blocked.slice(0, 12)}, later work than the base ${main.slice(0, 12)}, and no baseline of the base was kept`,
    });
  });
});

/** Enough tests that `go test -v`'s per-test lines run far past the last lines a result keeps. */
const MANY = 30;
const GO_TESTS = [
  'package calc\n\nimport "testing"\n',
  ...Array.from({ length: MANY }, (_, at) => `func TestAdd${at}(t *testing.T) {\n\tif Add(${at}, 1) != ${at + 1} {\n\t\tt.Fatal("wrong")\n\t}\n}\n`),
].join("\n");
const ZERO_TEST = 'package calc\n\nimport "testing"\n\nfunc TestAddZero(t *testing.T) {\n\tif Add(4, 0) != 4 {\n\t\tt.Fatal("wrong")\n\t}\n}\n';

describe("a cached baseline of go test -v", () => {
  beforeAll(async () => {
    const probe = await exec(["go", "version"], { cwd: process.cwd() }).catch(() => undefined);
    if (probe?.exitCode !== 0) throw new Error("go is not installed (this test runs the real `go test -v`): apt-get install -y golang-go");
  });

  it("keeps the count of every test it ran, so the next story on the base is still compared with all of them", async () => {
    const s = await makeScenario({
      "go.mod": "module example.com/calc\n\ngo 1.18\n",
      "calc.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
      "calc_test.go": GO_TESTS,
      "zero_test.go": ZERO_TEST,
    });
    // Go's build cache in the step's own temporary folder: nothing lands in the worktree.
    const test = 'GOCACHE="${TMPDIR:-/tmp}/go-build" GOFLAGS=-mod=mod go test -v ./...';
    const first = await runScenario(s, { ...scriptedConfig(s, "complete", { test }), maxAttempts: 1 }, { ...story, branch: "harness/story-one" });
    expect(first.outcome.status).toBe("completed");
    expect(ofKind(first.journal, "integrity.finished")[0]?.counts).toMatchObject({ compared: true, base: { go: MANY + 1 }, head: { go: MANY + 1 } });

    const second = await runScenario(s, { ...scriptedConfig(s, "delete-go-test", { test }), maxAttempts: 1 }, { ...story, branch: "harness/story-two" });
    const [baseline] = ofKind(second.journal, "baseline.finished");
    expect(baseline?.cached).toBe(true);
    // The kept tail lost most per-test lines: read alone, it would under-count the base.
    expect(baseline?.outputTail.split("\n").filter((line) => line.startsWith("--- PASS")).length).toBeLessThan(MANY);
    expect(second.outcome).toMatchObject({ status: "blocked", failureClass: "test-integrity" });
    const [gate] = ofKind(second.journal, "integrity.finished");
    expect(gate?.counts).toEqual({ compared: true, base: { go: MANY + 1 }, head: { go: MANY } });
    expect(gate?.findings.map((finding) => finding.kind)).toEqual(["test-file-deleted", "fewer-tests-run"]);
  });
});
