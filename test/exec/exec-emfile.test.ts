/**
 * A spawn that fails for want of file descriptors is a result (or a typed error), never an
 * unhandled "error" event: reproduced in a child process whose RLIMIT_NOFILE is lowered with
 * prlimit, which opens files until EMFILE before it runs git through exec.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { exec } from "../../src/exec/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const CHILD = resolve("test/exec/emfile-child.ts");

afterAll(removeTempDirs);

describe("exec when the process is out of file descriptors", () => {
  it("reports the failed start as EMFILE and the process lives on", async () => {
    const probe = await exec(["prlimit", "--version"], { cwd: process.cwd() });
    if (probe.spawnError !== undefined) throw new Error("prlimit is missing: install util-linux (apt-get install util-linux)");
    const dir = makeTempDir();

    const child = await exec(["prlimit", "--nofile=256:256", "--", process.execPath, "--import", "tsx", CHILD, dir], {
      cwd: process.cwd(),
      timeoutMs: 120_000,
    });

    // Before the fix the child died of "Unhandled 'error' event ... spawn git EMFILE" (exit 1).
    expect({ exitCode: child.exitCode, tail: child.tail.includes("Unhandled") ? child.tail : "" }).toEqual({ exitCode: 0, tail: "" });
    expect(existsSync(join(dir, "result.json"))).toBe(true);
    const result = JSON.parse(readFileSync(join(dir, "result.json"), "utf8")) as {
      refusedWith: string;
      held: number;
      direct: { exitCode: number | null; spawnError?: string; tail: string };
      logged: unknown;
      viaGit: unknown;
      after: { exitCode: number | null };
    };
    expect(result.refusedWith).toBe("EMFILE");
    expect(result.held).toBeGreaterThan(0);
    expect(result.direct.exitCode).toBeNull();
    expect(result.direct.spawnError).toMatch(/^EMFILE: /);
    expect(result.direct.tail).toContain("could not start git: EMFILE");
    expect(result.logged).toEqual({ thrown: "ExecLogError" });
    expect(result.viaGit).toEqual({ name: "GitError", failureClass: "git-failed" });
    // Once descriptors are free again, the same call works: nothing was left half set up.
    expect(result.after.exitCode).toBe(0);
  });
});
