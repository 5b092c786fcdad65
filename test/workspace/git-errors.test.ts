/**
 * What a failed git call tells: the error's kind (how the pipeline and the operator tell a
 * missing ref from a conflict or a hang), its message (the command, the kind, the exit code and
 * git's last three lines), and the small helpers around git. Real repositories, real git.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { git, GitError, isWorkTree, splitNul } from "../../src/workspace/index.js";
import { initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";

let repo: string;

beforeAll(async () => {
  repo = join(makeTempDir(), "repo");
  await initRepo(repo, { "README.md": "# demo\n" });
});

afterAll(removeTempDirs);

async function failure(args: string[], options: { timeoutMs?: number; input?: string } = {}): Promise<GitError> {
  const error: unknown = await git(args, { cwd: repo, ...options }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof GitError)) throw new Error(`git ${args.join(" ")} did not fail with a GitError: ${String(error)}`);
  return error;
}

describe("GitError", () => {
  it("names the command, its kind, the exit code and git's last three lines", async () => {
    const error = await failure(["show", "no-such-revision"]);
    expect(error).toMatchObject({ name: "GitError", failureClass: "git-failed", kind: "not-found", exitCode: 128, args: ["show", "no-such-revision"] });
    expect(error.message).toMatch(/^git show no-such-revision failed \(not-found, exit 128\): fatal: ambiguous argument 'no-such-revision': unknown revision/);
    // Only the last three lines of what git said, one after the other.
    const noisy = await failure(["-c", "alias.noisy=!printf 'one\\ntwo\\nthree\\nfour\\n' >&2; exit 3", "noisy"]);
    expect(noisy.message).toBe(`git -c alias.noisy=!printf 'one\\ntwo\\nthree\\nfour\\n' >&2; exit 3 noisy failed (failed, exit 3): two / three / four`);
  });

  it("tells a patch that does not apply as a conflict", async () => {
    const patch = "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# not what is there\n+# changed\n";
    const error = await failure(["apply", "-"], { input: patch });
    expect(error.kind).toBe("conflict");
  });

  it("tells an unknown command as a plain failure", async () => {
    const error = await failure(["no-such-command"]);
    expect([error.kind, error.exitCode]).toEqual(["failed", 1]);
  });

  it("tells a call that outlived its deadline as a timeout, with no exit code", async () => {
    // An alias that waits far longer than the deadline (a hang guard, not a measurement).
    const error = await failure(["-c", "alias.hang=!sleep 600", "hang"], { timeoutMs: 500 });
    expect([error.kind, error.exitCode]).toEqual(["timeout", null]);
    expect(error.message).toContain("(timeout, exit none)");
  });
});

describe("git helpers", () => {
  it("splits NUL-terminated output into its entries, spaces and all", () => {
    expect(splitNul(Buffer.from("a\0b c\0\0d\0"))).toEqual(["a", "b c", "d"]);
    expect(splitNul(Buffer.alloc(0))).toEqual([]);
  });

  it("knows a working tree from a plain folder and from a repository's .git folder", async () => {
    expect(await isWorkTree(repo)).toBe(true);
    expect(await isWorkTree(join(repo, ".git"))).toBe(false);
    expect(await isWorkTree(makeTempDir())).toBe(false);
  });

  it("keeps a call's output in its log file when asked", async () => {
    const logPath = join(makeTempDir(), "git.log");
    await git(["log", "--format=%s"], { cwd: repo, logPath });
    expect(readFileSync(logPath, "utf8")).toContain("initial");
  });
});
