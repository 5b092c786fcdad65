/**
 * The integrity gate on a real Python repository tested with pytest: every weakening that keeps
 * the suite green is found, the controls raise nothing, and the count comparison reads what
 * pytest really printed. Needs `python3 -m pytest`; without it the test fails saying how to install it.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { exec } from "../../src/exec/index.js";
import { removeTempDirs } from "../support/tmp.js";
import { gateRepo, judgeGreenChange, kinds, type GateRepo } from "./repo.js";

const CALC_TEST = `import pytest

from calc import add, div
from tests.helpers import check


def test_add():
    assert add(1, 2) == 3
    assert add(0, 0) == 0


def test_div():
    check(div(6, 3), 2)


def test_div_by_zero():
    with pytest.raises(ZeroDivisionError):
        div(1, 0)


class TestNegatives:
    def test_add_negatives(self):
        assert add(-1, -2) == -3
`;

const OTHER_TEST = `from calc import add


def test_commutative():
    assert add(2, 5) == add(5, 2)
`;

const FILES = {
  "calc.py": "def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n",
  "tests/__init__.py": "",
  "tests/helpers.py": "def check(actual, expected):\n    assert actual == expected\n",
  "tests/test_calc.py": CALC_TEST,
  "tests/test_other.py": OTHER_TEST,
  "pytest.ini": "[pytest]\ntestpaths = tests\n",
  "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n\n[tool.coverage.report]\nfail_under = 90\n\n[tool.black]\nline-length = 100\n',
  ".gitignore": "__pycache__/\n.pytest_cache/\n",
};

const TEST = "python3 -B -m pytest -q -p no:cacheprovider";
let repo: GateRepo;

beforeAll(async () => {
  const probe = await exec(["python3", "-m", "pytest", "--version"], { cwd: process.cwd() });
  if (probe.exitCode !== 0) throw new Error("python3 -m pytest is not available: apt-get install python3-pytest");
  repo = await gateRepo(FILES);
});
afterAll(() => removeTempDirs());

describe("the integrity gate on pytest", () => {
  it("finds a deleted test file, and the tests that no longer run", async () => {
    const { verdict, base, head } = await judgeGreenChange(repo, TEST, { remove: ["tests/test_calc.py"] });
    expect(base).toEqual({ pytest: 5 });
    expect(head).toEqual({ pytest: 1 });
    expect(kinds(verdict)).toEqual(["fewer-tests-run ", "test-file-deleted tests/test_calc.py"]);
    expect(verdict.findings.find((finding) => finding.kind === "fewer-tests-run")?.message).toBe("pytest ran 5 tests on the base and 1 in the clean clone");
  });

  it("finds skips added by marker and by call", async () => {
    const skipped = CALC_TEST.replace("def test_div():", "@pytest.mark.skip(reason='flaky')\ndef test_div():").replace(
      "    def test_add_negatives(self):\n",
      "    def test_add_negatives(self):\n        pytest.skip('later')\n",
    );
    const { verdict } = await judgeGreenChange(repo, TEST, { write: { "tests/test_calc.py": skipped } });
    expect(verdict.findings.map((finding) => `${finding.kind} ${finding.file}:${finding.line}`)).toEqual([
      "skip-added tests/test_calc.py:12",
      "skip-added tests/test_calc.py:24",
      "fewer-tests-run :1",
    ]);
  });

  it("finds a dropped case and fewer assertions", async () => {
    const { verdict } = await judgeGreenChange(repo, TEST, {
      write: {
        "tests/test_calc.py": CALC_TEST.replace(
          "\n\nclass TestNegatives:\n    def test_add_negatives(self):\n        assert add(-1, -2) == -3\n",
          "\n",
        ).replace("    assert add(0, 0) == 0\n", ""),
      },
    });
    expect(kinds(verdict)).toEqual(["fewer-assertions tests/test_calc.py", "fewer-test-cases tests/test_calc.py", "fewer-tests-run "]);
  });

  it("finds the runner's configuration changed and the coverage floor lowered", async () => {
    const { verdict } = await judgeGreenChange(repo, TEST, {
      write: {
        "pytest.ini": "[pytest]\ntestpaths = tests\naddopts = -k 'not div'\n",
        "pyproject.toml": FILES["pyproject.toml"].replace("fail_under = 90", "fail_under = 50"),
      },
    });
    expect(verdict.findings.map((finding) => `${finding.kind} ${finding.file}:${finding.line}`).sort()).toEqual([
      "coverage-lowered pyproject.toml:6",
      "fewer-tests-run :1",
      "test-config-changed pyproject.toml:6",
      "test-config-changed pytest.ini:3",
    ]);
  });

  it("finds suppressions added", async () => {
    const { verdict } = await judgeGreenChange(repo, TEST, {
      write: { "calc.py": "import os  # noqa: F401\n\n\ndef add(a, b):\n    return a + b  # type: ignore\n\n\ndef div(a, b):\n    return a / b\n" },
    });
    expect(verdict.findings.map((finding) => `${finding.kind} ${finding.file}:${finding.line}`)).toEqual([
      "suppression-added calc.py:1",
      "suppression-added calc.py:5",
    ]);
  });

  describe("raises nothing for", () => {
    it("an added test, and a change outside the runner's sections of pyproject.toml", async () => {
      const { verdict, base, head } = await judgeGreenChange(repo, TEST, {
        write: {
          "tests/test_other.py": `${OTHER_TEST}\n\ndef test_zero():\n    assert add(7, 0) == 7\n`,
          "pyproject.toml": FILES["pyproject.toml"].replace("line-length = 100", "line-length = 120"),
        },
      });
      expect(head.pytest).toBe((base.pytest ?? 0) + 1);
      expect(verdict.findings).toEqual([]);
    });

    it("a test file renamed", async () => {
      const { verdict } = await judgeGreenChange(repo, TEST, { rename: [["tests/test_calc.py", "tests/test_arithmetic.py"]] });
      expect(verdict.findings).toEqual([]);
    });

    it("a case moved between files", async () => {
      const moved = "\n\nclass TestNegatives:\n    def test_add_negatives(self):\n        assert add(-1, -2) == -3\n";
      const { verdict } = await judgeGreenChange(repo, TEST, {
        write: { "tests/test_calc.py": CALC_TEST.replace(moved, "\n"), "tests/test_other.py": `${OTHER_TEST}${moved}` },
      });
      expect(verdict.findings).toEqual([]);
    });

    it("a helper refactored", async () => {
      const { verdict } = await judgeGreenChange(repo, TEST, {
        write: {
          "tests/helpers.py": 'def check(actual, expected, what="value"):\n    """Asserts a computed value."""\n    assert actual == expected, what\n',
          "tests/test_calc.py": CALC_TEST.replace("check(div(6, 3), 2)", 'check(div(6, 3), 2, what="quotient")'),
        },
      });
      expect(verdict.findings).toEqual([]);
    });
  });
});
