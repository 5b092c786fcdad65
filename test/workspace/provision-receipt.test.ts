import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { exec } from "../../src/exec/index.js";
import { join } from "node:path";
import { schemas } from "../../src/schema/index.js";
import {
  assertProvisioned,
  git,
  isProvisioned,
  PROVISION_RECEIPT,
  provisionWorktree,
  readReceipt,
  WorkspaceProvisionError,
  writeReceipt,
} from "../../src/workspace/index.js";
import { appearedOnlyByRename, folderEvents, writtenNames } from "../support/fs-events.js";
import { addWorktree, commitAll, initRepo, makeTempDir, removeTempDirs } from "../support/tmp.js";
import { sandboxFromEnv } from "../../src/sandbox/index.js";

/** The operator's sandbox, resolved once here as the App resolves it at its edge. */
const sandbox = sandboxFromEnv();

afterAll(removeTempDirs);

describe("receipt", () => {
  // Deterministic, where a concurrent reader would only catch a torn write by luck: the kernel
  // reports every write to every name in the folder, and none may land on the receipt's name.
  it("appears at its path only by a rename of a written temp file beside it", async () => {
    const worktree = makeTempDir("harness-receipt-");
    for (const i of [1, 2]) {
      const events = await folderEvents(worktree, () =>
        writeReceipt(worktree, { cmd: `install ${i}`, exitCode: 0, at: new Date().toISOString(), durationMs: i }),
      );
      expect(appearedOnlyByRename(events, PROVISION_RECEIPT)).toBe(true);
      expect(writtenNames(events)).toEqual([expect.stringMatching(new RegExp(`^\\${PROVISION_RECEIPT}\\.\\d+\\.[0-9a-f]{8}\\.tmp$`))]);
      expect(readReceipt(worktree)?.durationMs).toBe(i);
    }
    expect(readdirSync(worktree)).toEqual([PROVISION_RECEIPT]);
  });

  it("is written the same way by provisioning", async () => {
    const root = makeTempDir("harness-receipt-prov-");
    const worktree = join(root, "wt");
    mkdirSync(worktree);
    const events = await folderEvents(worktree, () =>
      provisionWorktree({
        sandbox,
        worktree,
        taskId: "t",
        logPath: join(root, "p.log"),
        harnessHome: join(root, "home"),
        config: { command: "echo installed > deps.txt" },
      }),
    );
    expect(appearedOnlyByRename(events, PROVISION_RECEIPT)).toBe(true);
    expect(writtenNames(events)).toContain("deps.txt");
    expect(isProvisioned(worktree)).toBe(true);
  });

  it("is one schema-valid JSON line with keys in the pinned order", () => {
    const worktree = makeTempDir("harness-receipt-");
    writeReceipt(worktree, { durationMs: 5, at: "2026-01-01T00:00:00.000Z", exitCode: 0, cmd: "npm ci" } as never);
    const text = readFileSync(join(worktree, PROVISION_RECEIPT), "utf8");
    expect(text).toBe('{"cmd":"npm ci","exitCode":0,"at":"2026-01-01T00:00:00.000Z","durationMs":5}\n');
    expect(schemas().issues("provision-receipt", JSON.parse(text))).toEqual([]);
    expect(() => writeReceipt(worktree, { cmd: "x", exitCode: 1, at: "now", durationMs: -1 } as never)).toThrow(/\.harness-provisioned/);
  });

  it("an unreadable or invalid receipt counts as missing", () => {
    const worktree = makeTempDir("harness-receipt-");
    writeFileSync(join(worktree, PROVISION_RECEIPT), '{"cmd":null,"exitCode":0');
    expect(isProvisioned(worktree)).toBe(false);
    writeFileSync(join(worktree, PROVISION_RECEIPT), '{"cmd":null,"exitCode":1,"at":"2026-01-01T00:00:00Z","durationMs":0}\n');
    expect(readReceipt(worktree)).toBeUndefined();
  });
});

describe("a receipt an agent planted", () => {
  // Before the bounded reader, the first read of the FIFO waited for a writer on the App's thread, for good.
  it("as a FIFO counts as missing at once, and provisioning writes a real one over it", async () => {
    const root = makeTempDir("harness-receipt-fifo-");
    const worktree = join(root, "wt");
    mkdirSync(worktree);
    expect((await exec(["mkfifo", PROVISION_RECEIPT], { cwd: worktree })).exitCode).toBe(0);
    expect(readReceipt(worktree)).toBeUndefined();
    expect(isProvisioned(worktree)).toBe(false);
    expect(() => assertProvisioned(worktree, "seat:tester")).toThrow(WorkspaceProvisionError);
    const outcome = await provisionWorktree({ sandbox, worktree, taskId: "t", logPath: join(root, "p.log"), harnessHome: join(root, "home") });
    expect(outcome.skipped).toBe(false);
    expect(lstatSync(join(worktree, PROVISION_RECEIPT)).isFile()).toBe(true);
    expect(isProvisioned(worktree)).toBe(true);
  });

  it("as a symlink to a valid receipt elsewhere, or as a huge file, counts as missing", () => {
    const root = makeTempDir("harness-receipt-link-");
    const elsewhere = join(root, "elsewhere");
    const worktree = join(root, "wt");
    mkdirSync(elsewhere);
    mkdirSync(worktree);
    writeReceipt(elsewhere, { cmd: null, exitCode: 0, at: "2026-01-01T00:00:00.000Z", durationMs: 0 });
    symlinkSync(join(elsewhere, PROVISION_RECEIPT), join(worktree, PROVISION_RECEIPT));
    expect(readReceipt(worktree)).toBeUndefined();
    rmSync(join(worktree, PROVISION_RECEIPT));
    writeFileSync(join(worktree, PROVISION_RECEIPT), "");
    truncateSync(join(worktree, PROVISION_RECEIPT), 1024 ** 3);
    expect(readReceipt(worktree)).toBeUndefined();
  });
});

describe("receipt and git", () => {
  it("never shows in git status, in the repository or a linked worktree, and the exclude line is not duplicated", async () => {
    const root = makeTempDir("harness-receipt-git-");
    const repo = join(root, "repo");
    await initRepo(repo, { "README.md": "hello\n" });
    const linked = await addWorktree(repo, join(root, "linked"));
    const logPath = join(root, "provision.log");
    await provisionWorktree({ sandbox, worktree: repo, taskId: "a", logPath, harnessHome: join(root, "home") });
    await provisionWorktree({ sandbox, worktree: linked, taskId: "b", logPath, harnessHome: join(root, "home") });
    expect(existsSync(join(linked, PROVISION_RECEIPT))).toBe(true);
    expect(await git(["status", "--porcelain", "--untracked-files=all"], { cwd: repo, readOnly: true })).toBe("");
    expect(await git(["status", "--porcelain", "--untracked-files=all"], { cwd: linked, readOnly: true })).toBe("");
    const exclude = readFileSync(join(repo, ".git", "info", "exclude"), "utf8");
    expect(exclude.split("\n").filter((line) => line === `/${PROVISION_RECEIPT}`)).toHaveLength(1);

    // Committing everything in the worktree does not pick it up either.
    writeFileSync(join(linked, "change.txt"), "x\n");
    await commitAll(linked, "change");
    expect(await git(["ls-files"], { cwd: linked, readOnly: true })).not.toContain(PROVISION_RECEIPT);
  });

  it("anchors the exclude lines at a worktree that is a sub-folder of its repository", async () => {
    const root = makeTempDir("harness-receipt-git-");
    const repo = join(root, "repo");
    await initRepo(repo, { "packages/a [x]/README.md": "hello\n" });
    const sub = join(repo, "packages", "a [x]");
    await provisionWorktree({ sandbox, worktree: sub, taskId: "s", logPath: join(root, "s.log"), harnessHome: join(root, "home") });
    expect(existsSync(join(sub, PROVISION_RECEIPT))).toBe(true);
    expect(await git(["status", "--porcelain", "--untracked-files=all"], { cwd: repo, readOnly: true })).toBe("");
    const exclude = readFileSync(join(repo, ".git", "info", "exclude"), "utf8");
    expect(exclude).toContain(`/packages/a \\[x\\]/${PROVISION_RECEIPT}\n`);
    // A receipt-named file elsewhere in the repository is not hidden.
    writeFileSync(join(repo, PROVISION_RECEIPT), "{}");
    expect(await git(["status", "--porcelain"], { cwd: repo, readOnly: true })).toBe(`?? ${PROVISION_RECEIPT}`);
  });

  it("adds the exclude line once even when provisioning worktrees concurrently", async () => {
    const root = makeTempDir("harness-receipt-git-");
    const repo = join(root, "repo");
    await initRepo(repo, { "README.md": "hello\n" });
    // One at a time: git itself does not guard concurrent `worktree add` (the provisioning is what runs concurrently here).
    const worktrees: string[] = [];
    for (const n of [1, 2, 3]) worktrees.push(await addWorktree(repo, join(root, `wt${n}`), `b${n}`));
    await Promise.all(
      worktrees.map((worktree, n) =>
        provisionWorktree({ sandbox, worktree, taskId: `t${n}`, logPath: join(root, `l${n}.log`), harnessHome: join(root, "home") }),
      ),
    );
    const exclude = readFileSync(join(repo, ".git", "info", "exclude"), "utf8");
    expect(exclude.split("\n").filter((line) => line === `/${PROVISION_RECEIPT}`)).toHaveLength(1);
  });
});

describe("assertProvisioned", () => {
  it("throws WorkspaceProvisionError naming the phase when the receipt is missing, and never provisions", () => {
    const worktree = makeTempDir("harness-assert-");
    writeFileSync(join(worktree, "package-lock.json"), "{}");
    let caught: unknown;
    try {
      assertProvisioned(worktree, "implementer");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(WorkspaceProvisionError);
    expect(caught).toMatchObject({ failureClass: "workspace-provision-failed", phase: "implementer", cmd: null, exitCode: null });
    expect((caught as Error).message).toContain("implementer");
    expect(existsSync(join(worktree, PROVISION_RECEIPT))).toBe(false);
  });

  it("passes once the worktree is provisioned", async () => {
    const worktree = makeTempDir("harness-assert-");
    const logs = makeTempDir("harness-assert-logs-");
    await provisionWorktree({ sandbox, worktree, taskId: "t", logPath: join(logs, "provision.log"), harnessHome: join(logs, "home") });
    expect(() => assertProvisioned(worktree, "verifier")).not.toThrow();
  });
});
