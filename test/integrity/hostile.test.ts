/**
 * The work the gate reads is the agent's: a FIFO where a test file was (an open for reading would
 * wait forever), a symlink to a file of the App's, a file larger than the cap. The gate finishes,
 * reads none of them, and still finds the test file that is gone.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { gateRepo, judge, kinds } from "./repo.js";

afterAll(() => removeTempDirs());

const CASES = 'const assert = require("node:assert");\n\nit("adds", () => {\n  assert.equal(1 + 1, 2);\n});\n';

describe("the gate on hostile work", () => {
  it("reads no FIFO, symlink or oversized file, and still finds the test that is gone", async () => {
    const repo = await gateRepo({ "test/a.test.js": CASES, "test/b.test.js": CASES, "src/x.js": "module.exports = 1;\n" });
    const secretDir = makeTempDir("harness-app-secret-");
    const secret = join(secretDir, "key.js");
    writeFileSync(secret, `// @ts-ignore\nit("leaks the App's secret", () => {});\n`);
    // A FIFO where a test file was, and a new "test file" that is a symlink to the App's file.
    rmSync(join(repo.dir, "test/a.test.js"));
    expect((await exec(["mkfifo", join(repo.dir, "test/a.test.js")], { cwd: repo.dir })).exitCode).toBe(0);
    symlinkSync(secret, join(repo.dir, "test/c.test.js"));
    // A symlink where a tracked test file was (a type change for git).
    rmSync(join(repo.dir, "test/b.test.js"));
    symlinkSync(secret, join(repo.dir, "test/b.test.js"));
    // Over the 1 MiB cap: one line of cases the gate must not count (nor scan).
    writeFileSync(join(repo.dir, "test/huge.test.js"), `${'it("x", () => {});'.repeat(70_000)}\n`);
    const verdict = await judge(repo);
    // The FIFO holds no test: the file's cases are gone.
    expect(kinds(verdict)).toEqual(["test-file-emptied test/a.test.js", "test-file-emptied test/b.test.js"]);
    expect(verdict.unread.sort()).toEqual(["test/a.test.js", "test/b.test.js", "test/c.test.js", "test/huge.test.js"]);
    expect(JSON.stringify(verdict)).not.toContain("leaks the App's secret");
  });
});
