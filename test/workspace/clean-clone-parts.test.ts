/**
 * The clean-clone check's pure parts, each pinned on its own: parsing git's raw diff, judging
 * where a symlink points, bounding the list of refusals and the error's detail, checking option
 * and link names, the result's key order and exit code, and reading a command's program word.
 * They run in milliseconds, so each guard is pinned without building a clone.
 */
import { parseRawDiff, outsideTarget, describeRefusals } from "../../src/workspace/clean-clone/refuse.js";
import { excludePattern, validateLinkName } from "../../src/workspace/clean-clone/links.js";
import { checkOptions } from "../../src/workspace/clean-clone/options.js";
import { ordered } from "../../src/workspace/clean-clone/record.js";
import { programWord } from "../../src/workspace/clean-clone/invoked.js";
import { commandWithInterpreter, pathWithInterpreter } from "../../src/workspace/clean-clone/interpreter.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  CLEAN_CLONE_DETAIL_BYTES,
  CleanCloneBuildError,
  CleanCloneOptionsError,
  cleanCloneExitCode,
  cleanClonePassed,
  writeCleanCloneResult,
  type CleanCloneResult,
} from "../../src/workspace/index.js";
import { removeTemps, temp } from "./clean-clone-fixtures.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const sandbox = sandboxFromEnv();

afterAll(removeTemps);

const LEAD = "the commit cannot be checked out as it stands here: ";
const raw = (...fields: string[]): Buffer => Buffer.from(fields.map((field) => `${field}\0`).join(""), "utf8");
const ZERO = "0".repeat(40);
const BLOB = "b".repeat(40);

describe("parseRawDiff", () => {
  it("reads each record's modes, new object, status and path, the path as git wrote it", () => {
    const bytes = raw(`:160000 160000 ${ZERO} ${BLOB} M`, "sub", `:000000 120000 ${ZERO} ${BLOB} A`, "dir/with space\nand newline");
    expect(parseRawDiff(bytes)).toEqual([
      { oldMode: "160000", newMode: "160000", newObject: BLOB, status: "M", path: "sub" },
      { oldMode: "000000", newMode: "120000", newObject: BLOB, status: "A", path: "dir/with space\nand newline" },
    ]);
  });

  it("reads no record cut before its path", () => {
    expect(parseRawDiff(Buffer.from(`:000000 120000 ${ZERO} ${BLOB} A`, "utf8"))).toEqual([]);
    expect(parseRawDiff(raw(`:000000 100644 ${ZERO} ${BLOB} A`, "a.txt", `:000000 120000 ${ZERO} ${BLOB} A`).subarray(0, -1))).toEqual([
      { oldMode: "000000", newMode: "100644", newObject: BLOB, status: "A", path: "a.txt" },
    ]);
  });

  it("is empty for no output, and stops at an empty header", () => {
    expect(parseRawDiff(Buffer.alloc(0))).toEqual([]);
    expect(parseRawDiff(raw("", "never-read", `:100644 100644 ${ZERO} ${BLOB} M`, "a.txt"))).toEqual([]);
  });
});

describe("outsideTarget", () => {
  it.each([
    ["link", "/etc/hosts", "an absolute path"],
    ["link", "..", "a path above the repository root"],
    ["link", "../sibling", "a path above the repository root"],
    ["dir/link", "../../x", "a path above the repository root"],
    ["a/b/link", "../c/../../../x", "a path above the repository root"],
  ])("%s -> %s is %s", (path, target, where) => {
    expect(outsideTarget(path, target)).toBe(where);
  });

  it.each([
    ["link", "a.txt"],
    ["dir/link", "../a.txt"],
    ["dir/link", ".."],
    ["link", "..hidden"],
    ["link", "./x/../y"],
    ["link", "sub/..."],
  ])("%s -> %s stays inside", (path, target) => {
    expect(outsideTarget(path, target)).toBeUndefined();
  });
});

describe("describeRefusals", () => {
  const bytes = (text: string): number => Buffer.byteLength(text, "utf8");

  it("names every refusal when they fit", () => {
    expect(describeRefusals(["one", "two", "three"], 10_000)).toBe(`${LEAD}one; two; three`);
    expect(describeRefusals(["only"], 10_000)).toBe(`${LEAD}only`);
  });

  it("always names the first, even past the budget, and counts the rest", () => {
    expect(describeRefusals(["x".repeat(200), "y"], 10)).toBe(`${LEAD}${"x".repeat(200)}; … and 1 more`);
    expect(describeRefusals(["z".repeat(200)], 10)).toBe(`${LEAD}${"z".repeat(200)}`);
  });

  it("keeps room for the count while more follow, and needs none for the last", () => {
    const last = "c".repeat(30);
    const sentences = ["aaaa", "bbbb", last];
    const count = bytes("; … and 3 more");
    // Two named and room for the count: exactly at the budget, both are named.
    const two = bytes(`${LEAD}aaaa; bbbb`) + count;
    expect(describeRefusals(sentences, two)).toBe(`${LEAD}aaaa; bbbb; … and 1 more`);
    expect(describeRefusals(sentences, two - 1)).toBe(`${LEAD}aaaa; … and 2 more`);
    // The last needs no room for a count: the whole text at exactly the budget.
    const all = bytes(`${LEAD}aaaa; bbbb; ${last}`);
    expect(describeRefusals(sentences, all)).toBe(`${LEAD}aaaa; bbbb; ${last}`);
    expect(describeRefusals(sentences, all - 1)).toBe(`${LEAD}aaaa; bbbb; … and 1 more`);
  });

  it("counts bytes, not characters", () => {
    const sentences = ["ü".repeat(10), "é".repeat(10)];
    const budget = bytes(`${LEAD}${"ü".repeat(10)}; ${"é".repeat(10)}`);
    expect(describeRefusals(sentences, budget)).toBe(`${LEAD}${"ü".repeat(10)}; ${"é".repeat(10)}`);
    expect(describeRefusals(sentences, budget - 1)).toBe(`${LEAD}${"ü".repeat(10)}; … and 1 more`);
  });
});

describe("CleanCloneBuildError", () => {
  it("keeps a detail that fits whole (the bound less the cut mark), and names the step and the repository", () => {
    const detail = "d".repeat(CLEAN_CLONE_DETAIL_BYTES - 4);
    const error = new CleanCloneBuildError("clone", "/some/repo", detail, "t".repeat(40));
    expect(error.detail).toBe(detail);
    expect(error.message).toBe(`clean clone of /some/repo could not be built (clone): ${detail}`);
    expect(error).toMatchObject({
      name: "CleanCloneBuildError",
      step: "clone",
      repo: "/some/repo",
      tree: "t".repeat(40),
      failureClass: "clean-clone-build-failed",
    });
  });

  it("cuts a longer detail to its end, marked, within the bound", () => {
    const detail = `${"h".repeat(CLEAN_CLONE_DETAIL_BYTES - 10)}, the end`;
    const error = new CleanCloneBuildError("commit", "/r", detail);
    expect(Buffer.byteLength(error.detail)).toBe(CLEAN_CLONE_DETAIL_BYTES);
    expect(error.detail).toBe(`... ${detail.slice(-(CLEAN_CLONE_DETAIL_BYTES - 4))}`);
    expect(error.message).toBe(`clean clone of /r could not be built (commit): ${error.detail}`);
    // One byte over the whole-detail bound is cut too.
    expect(new CleanCloneBuildError("commit", "/r", "e".repeat(CLEAN_CLONE_DETAIL_BYTES - 3)).detail).toBe(`... ${"e".repeat(CLEAN_CLONE_DETAIL_BYTES - 4)}`);
  });
});

describe("link names", () => {
  it.each([
    ["", "must not be empty"],
    ["a\0b", "must not contain NUL or newline"],
    ["a\nb", "must not contain NUL or newline"],
    ["/abs", "must be relative to the repository root"],
    ["a//b", "must not contain empty, '.' or '..' segments"],
    ["./a", "must not contain empty, '.' or '..' segments"],
    ["a/..", "must not contain empty, '.' or '..' segments"],
    [".git", "must not point into .git"],
    [".git/hooks", "must not point into .git"],
    [".git/", "must not point into .git"],
    ["../", "must not contain empty, '.' or '..' segments"],
  ])("refuse %j: %s", (name, problem) => {
    expect(() => validateLinkName(name, "links[3]")).toThrow(new CleanCloneOptionsError("links[3]", name, problem));
    const error: unknown = (() => {
      try {
        return validateLinkName(name, "links[3]");
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toMatchObject({ name: "CleanCloneOptionsError", failureClass: "config-invalid", field: "links[3]", value: name, problem });
    expect((error as Error).message).toBe(`clean-clone option links[3] ${problem} (got ${JSON.stringify(name)})`);
  });

  it.each(["node_modules", "vendor/bundle", "node_modules/", "node_modules//", ".venv", "a.git", "sub/.git"])("accept %j and return it", (name) => {
    expect(validateLinkName(name, "links[0]")).toBe(name);
  });

  it("become anchored exclude patterns with globs, backslashes and a trailing space escaped", () => {
    expect(excludePattern("node_modules/")).toBe("/node_modules");
    expect(excludePattern("vendor/bundle//")).toBe("/vendor/bundle");
    expect(excludePattern("we*ird?[x]\\n")).toBe("/we\\*ird\\?\\[x\\]\\\\n");
    expect(excludePattern("space ")).toBe("/space\\ ");
    expect(excludePattern("a b")).toBe("/a b");
  });
});

describe("checkOptions", () => {
  const base = { repo: "/r", command: "npm test", sandbox };
  const problem = (options: Parameters<typeof checkOptions>[0]): string | undefined => {
    try {
      checkOptions(options);
      return undefined;
    } catch (error) {
      if (!(error instanceof CleanCloneOptionsError)) throw error;
      return `${error.field}: ${error.problem}`;
    }
  };

  it("accepts well-formed options", () => {
    expect(problem(base)).toBeUndefined();
    expect(problem({ ...base, timeoutMs: 1, depth: 1, interpreter: "python3", env: { allow: ["_A1", "b"] }, links: ["node_modules"] })).toBeUndefined();
    expect(problem({ ...base, env: { set: { ONLY_SET: "1" } } })).toBeUndefined();
  });

  it.each([
    [{ command: "" }, "command: must not be empty"],
    [{ command: " \t\n" }, "command: must not be empty"],
    [{ links: ["ok", "../up"] }, "links[1]: must not contain empty, '.' or '..' segments"],
    [{ timeoutMs: 0 }, "timeoutMs: must be a positive integer"],
    [{ timeoutMs: -5 }, "timeoutMs: must be a positive integer"],
    [{ timeoutMs: 1.5 }, "timeoutMs: must be a positive integer"],
    [{ timeoutMs: Number.MAX_SAFE_INTEGER + 1 }, "timeoutMs: must be a positive integer"],
    [{ depth: 0 }, "depth: must be a positive integer"],
    [{ depth: 2.5 }, "depth: must be a positive integer"],
    [{ interpreter: " " }, "interpreter: must not be empty"],
    [{ env: { allow: ["OK", "1BAD"] } }, "env.allow[1]: must be an environment variable name"],
    [{ env: { allow: ["BAD-NAME"] } }, "env.allow[0]: must be an environment variable name"],
    [{ env: { allow: ["X Y"] } }, "env.allow[0]: must be an environment variable name"],
    [{ env: { allow: [" X"] } }, "env.allow[0]: must be an environment variable name"],
  ])("refuses %j", (bad, expected) => {
    expect(problem({ ...base, ...bad })).toBe(expected);
  });

  it("reports the offending value", () => {
    expect(() => checkOptions({ ...base, depth: 0 })).toThrow('clean-clone option depth must be a positive integer (got "0")');
  });
});

describe("the result", () => {
  it("comes in the pinned key order, without undefined values or empty warnings", () => {
    const result = ordered("npm test", { warnings: [], commit: "c", exitCode: 0, outputTail: "ok", interpreter: undefined, ran: true }, 12);
    expect(JSON.stringify(result)).toBe('{"ran":true,"command":"npm test","exitCode":0,"outputTail":"ok","durationMs":12,"commit":"c"}');
    const all = ordered(
      "t",
      { provisioned: true, linked: ["a"], depth: 1, reason: "r", timedOut: true, interpreterVersion: "v", interpreter: "i", warnings: ["w"] },
      3,
    );
    expect(Object.keys(all)).toEqual([
      "ran",
      "command",
      "interpreter",
      "interpreterVersion",
      "durationMs",
      "timedOut",
      "reason",
      "depth",
      "linked",
      "provisioned",
      "warnings",
    ]);
    expect(all.ran).toBe(false);
  });

  it("is written as indented JSON with a final newline, its folders made, once its schema allows it", async () => {
    const path = join(temp("cc-result-"), "run", "deep", "clean-clone-result.json");
    const result: CleanCloneResult = { ran: false, command: "t", durationMs: 1, reason: "r" };
    await writeCleanCloneResult(path, result);
    expect(readFileSync(path, "utf8")).toBe('{\n  "ran": false,\n  "command": "t",\n  "durationMs": 1,\n  "reason": "r"\n}\n');
    await expect(writeCleanCloneResult(path, { ran: false, command: "t", durationMs: 1 } as CleanCloneResult)).rejects.toThrow(/clean-clone-result\.json/);
  });

  it("maps to the CLI's exit code: 0 passed, 1 failed or timed out, 2 did not run", () => {
    const ran = (extra: Partial<CleanCloneResult>): CleanCloneResult => ({ ran: true, command: "t", durationMs: 1, ...extra });
    expect(cleanCloneExitCode(ran({ exitCode: 0 }))).toBe(0);
    expect(cleanClonePassed(ran({ exitCode: 0 }))).toBe(true);
    expect(cleanCloneExitCode(ran({ exitCode: 3 }))).toBe(1);
    expect(cleanCloneExitCode(ran({ timedOut: true }))).toBe(1);
    expect(cleanClonePassed(ran({ timedOut: true }))).toBe(false);
    expect(cleanCloneExitCode({ ran: false, command: "t", durationMs: 1, reason: "r" })).toBe(2);
    expect(cleanClonePassed({ ran: false, command: "t", durationMs: 1, reason: "r", exitCode: 0 })).toBe(false);
  });
});

describe("programWord", () => {
  it.each([
    ["pytest -q", "pytest"],
    ["  .venv/bin/python -m pytest", ".venv/bin/python"],
    ["CI=1 FOO= node test.js", "node"],
    ["CI=1  \t node  test.js", "node"],
    ["exec python3 -m unittest", "python3"],
    ["A=1 exec ./run-tests", "./run-tests"],
    ["node@20:x,y+z%", "node@20:x,y+z%"],
  ])("%j runs %j", (command, word) => {
    expect(programWord(command)).toBe(word);
  });

  it.each([["(cd x && make)"], ["$PYTHON -m pytest"], ["A=1"], ["exec"], ["'quoted' x"], ["1A=x node"], [""]])("%j names no plain program", (command) => {
    expect(programWord(command)).toBeUndefined();
  });

  it("takes a shell keyword for a word (no interpreter is named so)", () => {
    expect(programWord("if true; then true; fi")).toBe("if");
  });
});

describe("the interpreter on PATH", () => {
  it("goes first, or alone when there is no PATH", () => {
    expect(pathWithInterpreter("/opt/py/bin/python3", "/usr/bin:/bin")).toBe("/opt/py/bin:/usr/bin:/bin");
    expect(pathWithInterpreter("/opt/py/bin/python3", "")).toBe("/opt/py/bin");
  });

  it("is put first by the command itself, its folder quoted for the shell", () => {
    expect(commandWithInterpreter("npm test", "/opt/it's here/bin/node")).toBe(`PATH='/opt/it'\\''s here/bin':"$PATH"; export PATH\nnpm test`);
  });
});
