/**
 * The integrity gate on a real JavaScript repository tested with node's own runner: every way
 * of weakening the suite that keeps it green is found (with its file and line), and the
 * controls (a test added, a test file renamed, a case moved, a helper refactored) raise nothing.
 * The count comparison reads what `node --test` really printed on the base and after the change.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { gateRepo, judgeGreenChange, kinds, type GateRepo } from "./repo.js";
import { removeTempDirs } from "../support/tmp.js";

const MATH_TEST = `import test from "node:test";
import assert from "node:assert/strict";
import { add, mul } from "../src/math.mjs";
import { check } from "./helpers.mjs";

test("adds", () => {
  assert.equal(add(1, 2), 3);
  assert.equal(add(0, 0), 0);
});

test("multiplies", () => {
  check(mul(2, 3), 6);
});

test("adds negatives", () => {
  assert.equal(add(-1, -2), -3);
});
`;

const OTHER_TEST = `import test from "node:test";
import assert from "node:assert/strict";
import { add } from "../src/math.mjs";

test("add is commutative", () => {
  assert.equal(add(2, 5), add(5, 2));
});
`;

const FILES = {
  "package.json": `${JSON.stringify({ name: "demo", type: "module", scripts: { test: "node --test" } }, null, 2)}\n`,
  ".c8rc.json": `${JSON.stringify({ lines: 90, branches: 80 }, null, 2)}\n`,
  "src/math.mjs": "export const add = (a, b) => a + b;\nexport const mul = (a, b) => a * b;\n",
  "test/helpers.mjs": `import assert from "node:assert/strict";\nexport function check(actual, expected) {\n  assert.equal(actual, expected);\n}\n`,
  "test/math.test.mjs": MATH_TEST,
  "test/other.test.mjs": OTHER_TEST,
  ".github/workflows/ci.yml": "name: ci\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm test\n",
};

const TEST = "node --test";
let repo: GateRepo;

beforeAll(async () => {
  repo = await gateRepo(FILES);
});
afterAll(() => removeTempDirs());

describe("the integrity gate on node's test runner", () => {
  it("finds a deleted test file, and the tests that no longer run", async () => {
    const { verdict, base, head } = await judgeGreenChange(repo, TEST, { remove: ["test/math.test.mjs"] });
    // node counts a test file without tests (the helper) as one passing test.
    expect(base).toEqual({ node: 5 });
    expect(head).toEqual({ node: 2 });
    expect(kinds(verdict)).toEqual(["fewer-tests-run ", "test-file-deleted test/math.test.mjs"]);
    expect(verdict.findings.find((finding) => finding.kind === "test-file-deleted")).toMatchObject({
      line: 1,
      message: expect.stringContaining("3 test cases"),
    });
    expect(verdict.counts).toEqual({ compared: true, base: { node: 5 }, head: { node: 2 } });
  });

  it("finds an emptied test file", async () => {
    const { verdict } = await judgeGreenChange(repo, TEST, { write: { "test/math.test.mjs": "// nothing here yet\n" } });
    expect(kinds(verdict)).toEqual(["fewer-tests-run ", "test-file-emptied test/math.test.mjs"]);
  });

  it("finds a test file moved out of the test paths", async () => {
    const { verdict } = await judgeGreenChange(repo, TEST, { rename: [["test/math.test.mjs", "src/math-cases.mjs"]] });
    expect(kinds(verdict)).toEqual(["fewer-tests-run ", "test-file-moved-out src/math-cases.mjs"]);
  });

  it("finds a dropped case at the line where the file changed", async () => {
    const { verdict } = await judgeGreenChange(repo, TEST, { write: { "test/math.test.mjs": MATH_TEST.replace(/\ntest\("adds negatives"[^]*$/, "\n") } });
    expect(kinds(verdict)).toEqual(["fewer-assertions test/math.test.mjs", "fewer-test-cases test/math.test.mjs", "fewer-tests-run "]);
    expect(verdict.findings.find((finding) => finding.kind === "fewer-test-cases")).toMatchObject({ line: 15, message: "3 test cases on the base, 2 now" });
  });

  it("finds a test commented out", async () => {
    const commented = MATH_TEST.replace(
      'test("adds negatives", () => {\n  assert.equal(add(-1, -2), -3);\n});',
      '/*\ntest("adds negatives", () => {\n  assert.equal(add(-1, -2), -3);\n});\n*/',
    );
    const { verdict } = await judgeGreenChange(repo, TEST, { write: { "test/math.test.mjs": commented } });
    expect(kinds(verdict)).toEqual(["fewer-assertions test/math.test.mjs", "fewer-test-cases test/math.test.mjs", "fewer-tests-run "]);
  });

  it("finds a skip and a focus, each on its line", async () => {
    const skipped = MATH_TEST.replace('test("multiplies"', 'test.skip("multiplies"').replace('test("adds negatives"', 'test("adds negatives", { skip: true }');
    const { verdict } = await judgeGreenChange(repo, TEST, {
      write: { "test/math.test.mjs": skipped, "test/other.test.mjs": OTHER_TEST.replace("test(", "test.only(") },
    });
    expect(verdict.findings.filter((finding) => finding.kind === "skip-added").map((finding) => `${finding.file}:${finding.line}`)).toEqual([
      "test/math.test.mjs:11",
      "test/math.test.mjs:15",
      "test/other.test.mjs:5",
    ]);
    expect(kinds(verdict)).toContain("fewer-tests-run ");
  });

  it("finds fewer assertions in a changed test file", async () => {
    const { verdict } = await judgeGreenChange(repo, TEST, { write: { "test/math.test.mjs": MATH_TEST.replace("  assert.equal(add(0, 0), 0);\n", "") } });
    expect(kinds(verdict)).toEqual(["fewer-assertions test/math.test.mjs"]);
    expect(verdict.findings[0]).toMatchObject({ line: 8, message: "3 assertions on the base, 2 now" });
  });

  it("finds the test script changed, a coverage threshold lowered and a CI workflow changed", async () => {
    const pkg = `${JSON.stringify({ name: "demo", type: "module", scripts: { test: "node --test || true" } }, null, 2)}\n`;
    const { verdict } = await judgeGreenChange(repo, TEST, {
      write: {
        "package.json": pkg,
        ".c8rc.json": `${JSON.stringify({ lines: 70, branches: 80 }, null, 2)}\n`,
        ".github/workflows/ci.yml": FILES[".github/workflows/ci.yml"].replace(
          "      - run: npm test",
          "      - run: npm test\n        continue-on-error: true",
        ),
      },
    });
    expect(verdict.findings.map((finding) => `${finding.kind} ${finding.file}:${finding.line}`).sort()).toEqual([
      "ci-workflow-changed .github/workflows/ci.yml:8",
      "coverage-lowered .c8rc.json:2",
      "test-config-changed .c8rc.json:2",
      "test-config-changed package.json:5",
    ]);
    expect(verdict.findings.find((finding) => finding.file === "package.json")?.message).toBe("script `test` changed: now `node --test || true`");
    expect(verdict.findings.find((finding) => finding.kind === "coverage-lowered")?.message).toBe("coverage threshold `lines` lowered from 90 to 70");
  });

  it("finds lint and type suppressions added to code", async () => {
    const { verdict } = await judgeGreenChange(repo, TEST, {
      write: {
        "src/math.mjs": "// eslint-disable-next-line no-unused-vars\nexport const add = (a, b) => a + b;\n// @ts-ignore\nexport const mul = (a, b) => a * b;\n",
      },
    });
    expect(verdict.findings.map((finding) => `${finding.kind} ${finding.file}:${finding.line}`)).toEqual([
      "suppression-added src/math.mjs:1",
      "suppression-added src/math.mjs:3",
    ]);
  });

  describe("raises nothing for", () => {
    it("an added test", async () => {
      const { verdict, base, head } = await judgeGreenChange(repo, TEST, {
        write: { "test/other.test.mjs": `${OTHER_TEST}\ntest("adds zero", () => {\n  assert.equal(add(7, 0), 7);\n});\n` },
      });
      expect(head.node).toBe((base.node ?? 0) + 1);
      expect(verdict.findings).toEqual([]);
      expect(verdict.counts.compared).toBe(true);
    });

    it("a test file renamed with its cases", async () => {
      const { verdict } = await judgeGreenChange(repo, TEST, { rename: [["test/math.test.mjs", "test/arith.test.mjs"]] });
      expect(verdict.findings).toEqual([]);
      expect(verdict.files).toBe(1);
    });

    it("a case moved from one file to another", async () => {
      const moved = 'test("adds negatives", () => {\n  assert.equal(add(-1, -2), -3);\n});\n';
      const { verdict } = await judgeGreenChange(repo, TEST, {
        write: { "test/math.test.mjs": MATH_TEST.replace(`\n${moved}`, ""), "test/other.test.mjs": `${OTHER_TEST}\n${moved}` },
      });
      expect(verdict.findings).toEqual([]);
    });

    it("a test helper refactored", async () => {
      const { verdict } = await judgeGreenChange(repo, TEST, {
        write: {
          "test/helpers.mjs": `import assert from "node:assert/strict";\n\n/** Asserts that a computation gave what was expected. */\nexport function expectValue(actual, expected, what = "value") {\n  assert.equal(actual, expected, what);\n}\n`,
          "test/math.test.mjs": MATH_TEST.replace('import { check } from "./helpers.mjs";', 'import { expectValue } from "./helpers.mjs";').replace(
            "check(mul(2, 3), 6)",
            'expectValue(mul(2, 3), 6, "product")',
          ),
        },
      });
      expect(verdict.findings).toEqual([]);
    });
  });

  it("accepts what the configuration allows and what a writer accepted, naming who", async () => {
    const allowed = await judgeGreenChange(repo, TEST, { remove: ["test/math.test.mjs"] }, { allowed: (path) => path.startsWith("test/"), workflows: "hold" });
    expect(kinds(allowed.verdict)).toEqual(["fewer-tests-run "]);
    expect(allowed.verdict.accepted).toEqual([expect.objectContaining({ kind: "test-file-deleted", acceptedBy: ".github/harness.yml" })]);
    const accepted = await judgeGreenChange(repo, TEST, { remove: ["test/math.test.mjs"] }, { allowed: () => false, workflows: "hold", acceptedBy: "octocat" });
    expect(accepted.verdict.findings).toEqual([]);
    expect(accepted.verdict.accepted.map((finding) => `${finding.kind} ${finding.acceptedBy}`).sort()).toEqual([
      "fewer-tests-run octocat",
      "test-file-deleted octocat",
    ]);
    const workflows = await judgeGreenChange(
      repo,
      TEST,
      { write: { ".github/workflows/ci.yml": "name: ci\non: push\njobs: {}\n" } },
      { allowed: () => false, workflows: "allow" },
    );
    expect(workflows.verdict.findings).toEqual([]);
  });
});
