/**
 * The integrity gate on a real jest repository and a real Go module. jest is this repository's
 * own; Go must be installed (`go test -v` is what the count is read from): without it the Go
 * cases fail saying how to install it.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { fileURLToPath } from "node:url";
import { exec } from "../../src/exec/index.js";
import { removeTempDirs } from "../support/tmp.js";
import { gateRepo, judgeGreenChange, kinds, type GateRepo } from "./repo.js";

const JEST = fileURLToPath(new URL("../../node_modules/jest/bin/jest.js", import.meta.url));
const q = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;

const MATH_TEST = `const { add } = require("../src/math.js");

describe("math", () => {
  it("adds", () => {
    expect(add(1, 2)).toBe(3);
  });

  it("adds zero", () => {
    expect(add(4, 0)).toBe(4);
  });
});
`;

afterAll(() => removeTempDirs());

describe("the integrity gate on jest", () => {
  const TEST = `node ${q(JEST)} --ci`;
  let repo: GateRepo;
  beforeAll(async () => {
    repo = await gateRepo({
      "package.json": `${JSON.stringify({ name: "demo", scripts: { test: "jest" } }, null, 2)}\n`,
      "jest.config.js": 'module.exports = {\n  testEnvironment: "node",\n  coverageThreshold: { global: { lines: 80, branches: 70 } },\n};\n',
      "src/math.js": "exports.add = (a, b) => a + b;\n",
      "test/math.test.js": MATH_TEST,
    });
  });

  it("finds xit and describe.only, and the test that no longer runs", async () => {
    const { verdict, base, head } = await judgeGreenChange(repo, TEST, {
      write: { "test/math.test.js": MATH_TEST.replace('it("adds zero"', 'xit("adds zero"').replace('describe("math"', 'describe.only("math"') },
    });
    expect(base).toEqual({ jest: 2 });
    expect(head).toEqual({ jest: 1 });
    expect(verdict.findings.map((finding) => `${finding.kind} ${finding.file}:${finding.line}`)).toEqual([
      "skip-added test/math.test.js:3",
      "skip-added test/math.test.js:8",
      "fewer-tests-run :1",
    ]);
  });

  it("finds the coverage threshold lowered in jest.config.js", async () => {
    const { verdict } = await judgeGreenChange(repo, TEST, {
      write: { "jest.config.js": 'module.exports = {\n  testEnvironment: "node",\n  coverageThreshold: { global: { lines: 10, branches: 70 } },\n};\n' },
    });
    expect(kinds(verdict)).toEqual(["coverage-lowered jest.config.js", "test-config-changed jest.config.js"]);
  });

  it("raises nothing for a test added", async () => {
    const { verdict, head } = await judgeGreenChange(repo, TEST, {
      write: { "test/more.test.js": 'const { add } = require("../src/math.js");\n\ntest("adds twice", () => {\n  expect(add(add(1, 1), 1)).toBe(3);\n});\n' },
    });
    expect(head).toEqual({ jest: 3 });
    expect(verdict.findings).toEqual([]);
  });
});

const GO_TEST = `package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Errorf("Add(1, 2) = %d", Add(1, 2))
	}
}

func TestAddZero(t *testing.T) {
	if Add(4, 0) != 4 {
		t.Fatal("Add(4, 0) != 4")
	}
}
`;

describe("the integrity gate on go test -v", () => {
  const TEST = "go test -v ./...";
  let repo: GateRepo;
  beforeAll(async () => {
    const probe = await exec(["go", "version"], { cwd: process.cwd() });
    if (probe.exitCode !== 0) throw new Error("go is not installed (the Go cases run `go test -v`): apt-get install golang-go");
    repo = await gateRepo({
      "go.mod": "module example.com/calc\n\ngo 1.18\n",
      "calc.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
      "calc_test.go": GO_TEST,
    });
  });

  it("finds t.Skip and a nolint, and the test that no longer runs", async () => {
    const { verdict, base, head } = await judgeGreenChange(repo, TEST, {
      write: {
        "calc_test.go": GO_TEST.replace("func TestAddZero(t *testing.T) {\n", 'func TestAddZero(t *testing.T) {\n\tt.Skip("later")\n'),
        "calc.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b } //nolint:revive\n",
      },
    });
    expect(base).toEqual({ go: 2 });
    expect(head).toEqual({ go: 1 });
    expect(verdict.findings.map((finding) => `${finding.kind} ${finding.file}:${finding.line}`)).toEqual([
      "skip-added calc_test.go:12",
      "suppression-added calc.go:4",
      "fewer-tests-run :1",
    ]);
  });

  it("finds a deleted test function", async () => {
    const { verdict } = await judgeGreenChange(repo, TEST, { write: { "calc_test.go": GO_TEST.slice(0, GO_TEST.indexOf("func TestAddZero")) } });
    expect(kinds(verdict)).toEqual(["fewer-assertions calc_test.go", "fewer-test-cases calc_test.go", "fewer-tests-run "]);
  });

  it("raises nothing for a test file renamed and a test added", async () => {
    const { verdict } = await judgeGreenChange(repo, TEST, {
      rename: [["calc_test.go", "add_test.go"]],
      write: {
        "more_test.go": 'package calc\n\nimport "testing"\n\nfunc TestAddNegative(t *testing.T) {\n\tif Add(-1, -1) != -2 {\n\t\tt.Error("wrong")\n\t}\n}\n',
      },
    });
    expect(verdict.findings).toEqual([]);
  });
});
