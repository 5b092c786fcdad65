/**
 * What a failed git call tells: the error's kind (how the pipeline and the operator tell a
 * missing ref from a conflict or a hang), its message (the command, the kind, the exit code and
 * git's last three lines), and the small helpers around git. Real repositories, real git.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import {
  classifyGitFailure,
  git,
  GitError,
  gitFailureClass,
  isForbiddenPush,
  isPushRefusal,
  isWorkTree,
  refusalMessage,
  splitNul,
} from "../../src/workspace/index.js";
import { freePort } from "../support/net.js";
import { commitAll, initRepo, makeTempDir, removeTempDirs, writeFiles } from "../support/tmp.js";

let repo: string;

beforeAll(async () => {
  repo = join(makeTempDir(), "repo");
  await initRepo(repo, { "README.md": "# demo\n" });
});

afterAll(removeTempDirs);

async function failure(args: string[], options: { timeoutMs?: number; input?: string; cwd?: string } = {}): Promise<GitError> {
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

describe("git's words, classified in one place", () => {
  /** A bare remote holding `main`, and a clone of it whose `main` is one commit ahead. */
  async function remoteAndClone(): Promise<{ remote: string; clone: string }> {
    const dir = makeTempDir();
    const remote = join(dir, "remote.git");
    await git(["-c", "init.defaultBranch=main", "init", "-q", "--bare", remote], { cwd: dir });
    await git(["push", "-q", remote, "HEAD:refs/heads/main"], { cwd: repo });
    const clone = join(dir, "clone");
    await git(["clone", "-q", remote, clone], { cwd: dir });
    writeFiles(clone, { "work.txt": "the story's work\n" });
    await commitAll(clone, "work");
    return { remote, clone };
  }

  it("tells a push a pre-receive hook refuses as push-refused, with the server's words", async () => {
    const { remote, clone } = await remoteAndClone();
    const hook = join(remote, "hooks", "pre-receive");
    writeFileSync(hook, "#!/bin/sh\necho 'GH013: Repository rule violations found for refs/heads/main.' >&2\nexit 1\n");
    chmodSync(hook, 0o755);
    const error = await failure(["push", "origin", "HEAD:refs/heads/main"], { cwd: clone });
    expect([error.kind, error.failureClass, isPushRefusal(error.kind)]).toEqual(["push-refused", "push-refused", true]);
    const said = refusalMessage(error.stderr);
    expect(said).toContain("remote: GH013: Repository rule violations found for refs/heads/main.");
    expect(said).toMatch(/\[remote rejected\] HEAD -> main \(pre-receive hook declined\)/);
    // git's own noise (where it pushed to) is left out.
    expect(said).not.toMatch(/^To /m);
  });

  it("tells a push over a branch that moved on as non-fast-forward, a refusal too", async () => {
    const { remote, clone } = await remoteAndClone();
    const other = join(makeTempDir(), "other");
    await git(["clone", "-q", remote, other], { cwd: repo });
    writeFiles(other, { "other.txt": "someone else's work\n" });
    await commitAll(other, "other");
    await git(["push", "-q", "origin", "HEAD:refs/heads/main"], { cwd: other });
    const error = await failure(["push", "origin", "HEAD:refs/heads/main"], { cwd: clone });
    expect([error.kind, error.failureClass, isPushRefusal(error.kind)]).toEqual(["non-fast-forward", "push-refused", true]);
    expect(refusalMessage(error.stderr)).toMatch(/! \[rejected\] +HEAD -> main \((fetch first|non-fast-forward)\)/);
  });

  it("tells a held index.lock as lock contention, not a refusal", async () => {
    const { clone } = await remoteAndClone();
    writeFileSync(join(clone, ".git", "index.lock"), "");
    writeFiles(clone, { "more.txt": "more\n" });
    const error = await failure(["add", "more.txt"], { cwd: clone });
    expect([error.kind, error.failureClass, isPushRefusal(error.kind)]).toEqual(["lock", "git-failed", false]);
  });

  it("tells a missing ref as not-found, locally and on the remote", async () => {
    const { clone } = await remoteAndClone();
    expect((await failure(["fetch", "origin", "refs/heads/no-such-branch"], { cwd: clone })).kind).toBe("not-found");
    expect((await failure(["log", "no-such-ref", "--"], { cwd: clone })).kind).toBe("not-found");
  });

  it("tells a folder outside any repository as not-a-repository", async () => {
    const error = await failure(["status"], { cwd: makeTempDir() });
    expect(error.kind).toBe("not-a-repository");
  });

  describe("over HTTP", () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      // Answers every request of git's smart HTTP with the status its path names.
      server = createServer((request, response) => {
        const status = /\/(401|502)\//.exec(request.url ?? "")?.[1];
        response.writeHead(Number(status ?? 404), status === "401" ? { "WWW-Authenticate": 'Basic realm="fake"' } : {});
        response.end();
      });
      await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
      const address = server.address();
      port = typeof address === "object" && address ? address.port : 0;
    });
    afterAll(() => new Promise<void>((done) => server.close(() => done())));

    it("tells a server asking for credentials as auth", async () => {
      const error = await failure(["ls-remote", `http://127.0.0.1:${port}/401/repo.git`]);
      expect([error.kind, error.failureClass]).toEqual(["auth", "git-failed"]);
    });

    it("tells a server's 5xx and a port nobody listens on as network", async () => {
      expect((await failure(["ls-remote", `http://127.0.0.1:${port}/502/repo.git`])).kind).toBe("network");
      const closed = await freePort();
      expect((await failure(["ls-remote", `http://127.0.0.1:${closed}/repo.git`])).kind).toBe("network");
    });
  });

  it("reads a refusal before any other words, and maps only refusals to push-refused", () => {
    // A refusal whose hook quotes a 403 and a missing path is still a refusal.
    const tail = "remote: error: GH001: 403 large file not found\n ! [remote rejected] main -> main (pre-receive hook declined)\n";
    expect(classifyGitFailure({ exitCode: 1, timedOut: false, tail })).toBe("push-refused");
    expect(classifyGitFailure({ exitCode: null, timedOut: true, tail })).toBe("timeout");
    expect(classifyGitFailure({ exitCode: 128, timedOut: false, tail: "fatal: the remote end hung up unexpectedly\n" })).toBe("network");
    for (const kind of ["auth", "not-found", "lock", "network", "conflict", "timeout", "object-copy", "not-a-repository", "failed"] as const) {
      expect([kind, gitFailureClass(kind), isPushRefusal(kind)]).toEqual([kind, "git-failed", false]);
    }
    // Without a rejection line, the refusal message is what git said.
    expect(refusalMessage("fatal: something else\n")).toBe("fatal: something else");
  });

  it("tells a local clone's object copy that raced another git process, before any other words", () => {
    // The copy's message names a file that is "not found": the race is still told as such, to be retried.
    const tail = "error: failed to copy file to '/x/objects/ab/tmp_obj_1': No such file or directory (not found)\nfatal: the remote end hung up unexpectedly\n";
    expect(classifyGitFailure({ exitCode: 128, timedOut: false, tail })).toBe("object-copy");
    expect(classifyGitFailure({ exitCode: 128, timedOut: false, tail: "fatal: failed to iterate over '/x/objects'\n" })).toBe("object-copy");
  });

  it("tells a push the server answered with 403 (a token that may not write there) from a 401 and from other kinds", () => {
    const forbidden = "remote: Permission to o/r.git denied.\nfatal: unable to access 'https://h/o/r.git/': The requested URL returned error: 403\n";
    expect(isForbiddenPush({ kind: "auth", stderr: forbidden })).toBe(true);
    expect(isForbiddenPush({ kind: "auth", stderr: "fatal: unable to access 'x': The requested URL returned error: 401\n" })).toBe(false);
    expect(isForbiddenPush({ kind: "auth", stderr: "fatal: The requested URL returned error: 4031\n" })).toBe(false);
    expect(isForbiddenPush({ kind: "network", stderr: forbidden })).toBe(false);
  });

  it("keeps of a refusal only the server's lines and the rejection, each without trailing blanks, and at most 4,000 characters", () => {
    const stderr = [
      "  remote: error: GH006: Protected branch update failed for refs/heads/main.   ",
      "To https://h/o/r.git",
      " ! [remote rejected] main -> main (protected branch hook declined)  ",
      "hint: ask whoever keeps the remote: they may allow it",
      "warning: this is no error: at all",
      "error: failed to push some refs to 'https://h/o/r.git'",
      "",
    ].join("\n");
    expect(refusalMessage(stderr)).toBe(
      [
        "remote: error: GH006: Protected branch update failed for refs/heads/main.",
        " ! [remote rejected] main -> main (protected branch hook declined)",
        "error: failed to push some refs to 'https://h/o/r.git'",
      ].join("\n"),
    );
    expect(refusalMessage(`remote: ${"x".repeat(5000)}\n`)).toHaveLength(4000);
  });

  it("names git's last three lines of a message that ends in a new line, and 'none' for a call without an exit code", () => {
    expect(new GitError("failed", ["x", "y"], 1, "one\ntwo\nthree\nfour\n").message).toBe("git x y failed (failed, exit 1): two / three / four");
    expect(new GitError("timeout", ["x"], null, "  late\n").message).toBe("git x failed (timeout, exit none): late");
  });
});
