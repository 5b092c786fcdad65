import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { git, type provisionWorktree } from "../../src/workspace/index.js";
import { readJournal } from "../../src/pipeline/index.js";
import { removeTempDirs } from "../support/tmp.js";
import { kinds, launches, makeScenario, ofKind, runScenario, scriptedConfig } from "./helpers.js";

afterAll(removeTempDirs);

describe("provisioning in the pipeline", () => {
  it("blocks a story whose worktree cannot be provisioned: no agent launched, no attempt counted", async () => {
    const s = await makeScenario();
    const config = scriptedConfig(s, "complete");
    config.provision.command = "echo cannot install >&2; exit 7";
    const { outcome, journal } = await runScenario(s, config);

    expect(outcome).toMatchObject({ status: "blocked", failureClass: "workspace-provision-failed" });
    expect(launches(s)).toEqual([]);
    // The baseline starts beside provisioning as soon as the worktree exists, and stops with the task.
    expect(kinds(journal)).toEqual([
      "run.started",
      "task.planned",
      "task.started",
      "worktree.created",
      "baseline.started",
      "provision.failed",
      "task.finished",
      "story.blocked",
    ]);
    const failed = ofKind(journal, "provision.failed")[0];
    expect(Object.keys(failed ?? {}).sort()).toEqual(["at", "cmd", "exitCode", "kind", "logTail", "taskId"]);
    expect(failed).toMatchObject({ cmd: "echo cannot install >&2; exit 7", exitCode: 7 });
    expect(failed?.logTail).toContain("cannot install");
    expect(ofKind(journal, "attempt.archived")).toEqual([]);
    expect(ofKind(journal, "retry.scheduled")).toEqual([]);
    expect(existsSync(join(outcome.runDir, "attempts"))).toBe(false);
    // The failed worktree is gone; the outcome is an empty commit carrying the trailer.
    expect(existsSync(outcome.worktree)).toBe(false);
    expect(await git(["worktree", "list", "--porcelain"], { cwd: s.repo })).not.toContain(outcome.worktree);
    const message = await git(["log", "-1", "--format=%B", outcome.commit ?? ""], { cwd: s.repo });
    expect(message).toMatch(/Failure-Class: workspace-provision-failed\n?$/);
    expect(await git(["show", "--name-only", "--format=", outcome.commit ?? ""], { cwd: s.repo })).toBe("");
    // The detail goes into the commit and to GitHub: no path of the harness's machine in it.
    expect(outcome.detail).toMatch(/log: logs\/\S+ in the run directory/);
    expect(message).not.toContain(s.home);
  });

  it("re-admits a blocked story in a different, freshly provisioned worktree with a fresh budget", async () => {
    const s = await makeScenario();
    const broken = scriptedConfig(s, "complete");
    broken.provision.command = "exit 9";
    const first = await runScenario(s, broken);
    expect(first.outcome.status).toBe("blocked");

    const second = await runScenario(s, scriptedConfig(s, "complete"), { readmission: true });
    expect(second.outcome.status).toBe("completed");
    expect(second.outcome.worktree).not.toBe(first.outcome.worktree);
    expect(ofKind(second.journal, "run.started")[0]).toMatchObject({ readmission: true });
    expect(ofKind(second.journal, "provision.succeeded")[0]).toMatchObject({ phase: "worktree", skipped: false, cmd: "true" });
    expect(ofKind(second.journal, "stage.started")[0]).toMatchObject({ stage: "implementer", attempt: 1 });
    // The branch continues from the blocked commit; both runs' histories are kept.
    expect(await git(["rev-parse", `${second.outcome.commit ?? ""}^`], { cwd: s.repo })).toBe(first.outcome.commit);
    const runs = readdirSync(join(s.home, "runs", "demo"));
    expect(runs).toHaveLength(2);
    expect(kinds(readJournal(join(first.outcome.runDir, "execution-history.ndjson"))).at(-1)).toBe("story.blocked");
  });

  it("re-provisions before the next seat or gate when the receipt disappears", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "drop-receipt"));
    expect(outcome.status).toBe("completed");
    // The implementer and the tester each delete the receipt; the tester's seat and the verifier's gate re-provision.
    expect(ofKind(journal, "provision.succeeded").map((event) => event.phase)).toEqual(["worktree", "seat:tester", "gate:verifier"]);
    const files = await git(["show", "--name-only", "--format=", outcome.commit ?? ""], { cwd: s.repo });
    expect(files).not.toContain(".harness-provisioned");
  });

  // The primary guards are info/exclude (commit) and the receipt provisioning writes (seats);
  // these are the second ones, for when the first slips.
  it("never commits the receipt, even when the repository's .gitignore un-ignores it over info/exclude", async () => {
    const s = await makeScenario({ ".gitignore": "!/.harness-provisioned\n" });
    const { outcome } = await runScenario(s, scriptedConfig(s, "complete"));
    expect(outcome.status).toBe("completed");
    const files = (await git(["show", "--name-only", "--format=", outcome.commit ?? ""], { cwd: s.repo })).split("\n");
    expect(files).toContain("feature.txt");
    expect(files).not.toContain(".harness-provisioned");
    expect(await git(["ls-tree", "-r", "--name-only", outcome.commit ?? ""], { cwd: s.repo })).not.toContain(".harness-provisioned");
  });

  it("admits no seat when provisioning reported success but left no receipt", async () => {
    const s = await makeScenario();
    const noReceipt: typeof provisionWorktree = async (args) => ({
      receiptPath: join(args.worktree, ".harness-provisioned"),
      receipt: { cmd: "true", exitCode: 0, at: new Date().toISOString(), durationMs: 1 },
      attempts: 1,
      skipped: false,
    });
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "complete"), { deps: { provisionWorktree: noReceipt } });
    expect(launches(s)).toEqual([]);
    expect(ofKind(journal, "stage.started")).toEqual([]);
    expect(outcome).toMatchObject({ status: "blocked", failureClass: "workspace-provision-failed" });
  });
});
