import { describe, expect, it } from "@jest/globals";
import { CHECK_RUN_OUTPUT_MAX_BYTES, COMMENT_MAX_CHARS, REDACTED, utf8Bytes } from "../../src/github/index.js";
import {
  renderCleanCloneCheck,
  renderHelp,
  renderProvisionCheck,
  renderStatusComment,
  renderStoryCheck,
  renderTaskCheck,
  renderVerifierCheck,
  STATUS_MARKER,
} from "../../src/github/report/index.js";
import { openFenceAtEnd } from "../../src/text/index.js";
import type { HistoryEvent } from "../../src/pipeline/events.js";
import {
  cleanClone,
  completedStory,
  gate,
  provisioned,
  provisionBlockedStory,
  replay,
  retryingStory,
  stagePassed,
  stageStarted,
  started,
  verdict,
  worktree,
} from "./story-events.js";

const TABLE_HEAD = "| Stage | State | Attempt | Duration |\n| --- | --- | --- | --- |";

describe("story check and status comment", () => {
  it("say which attempt runs and why the previous one was sent back", () => {
    const snapshot = replay(retryingStory());
    const progress = [
      "⏳ Attempt 2 of 3 is running (stage `implementer`).",
      "",
      "↩️ Attempt 1 was sent back from `verifier` to `implementer` (`clean-clone-failed`): suite fails in a fresh clone: fixture.json is ignored",
      "",
      TABLE_HEAD,
      "| implementer | ⏳ running | 2 | – |",
      "| tester | ⏸️ pending | – | – |",
      "| verifier | ⏸️ pending | – | – |",
      "| documenter | ⏸️ pending | – | – |",
    ].join("\n");
    expect(renderStoryCheck(snapshot)).toEqual({ title: "Attempt 2/3 running", summary: progress });
    expect(renderStatusComment(snapshot)).toBe(`${STATUS_MARKER}\n## story-harness: Add a greeting\n\n${progress}`);
  });

  it("name the failure class, what to do and the retry command when blocked", () => {
    const snapshot = replay(provisionBlockedStory());
    const comment = renderStatusComment(snapshot);
    expect(comment).toContain("⛔ Blocked on attempt 1 of 3: `workspace-provision-failed`.");
    expect(comment).toContain("**Failure class:** `workspace-provision-failed`\n\n```text\nnpm ci exited 1 twice\n```");
    expect(comment).toContain("**What to do:** Dependencies could not be installed in a fresh worktree.");
    expect(comment.endsWith("comment `/harness retry-blocked` on the pull request (write access needed).")).toBe(true);
    const check = renderStoryCheck(snapshot);
    expect(check.title).toBe("Blocked: workspace-provision-failed");
    expect(check.summary).toContain("press **Retry** on this check run, or comment `/harness retry-blocked`");
  });

  it("say a parked seat waits for its agents' limit, until when, and stop saying it once the stage ends", () => {
    const parked: HistoryEvent = {
      at: "2026-01-01T00:01:00.000Z",
      kind: "seat.parked",
      taskId: "task-1",
      stage: "implementer",
      attempt: 1,
      until: "2026-01-01T15:00:00.000Z",
    };
    const waiting = [started(), worktree, provisioned, stageStarted("implementer"), parked];
    const snapshot = replay(waiting);
    const line =
      "⏸️ Attempt 1 of 3 is waiting. Stage `implementer` is parked: every agent it may use is rate limited. It is tried again at 2026-01-01 15:00 UTC; the wait counts as no attempt.";
    const check = renderStoryCheck(snapshot);
    expect(check.title).toBe("Attempt 1/3 parked until 2026-01-01 15:00 UTC");
    expect(check.summary.split("\n")[0]).toBe(line);
    expect(renderStatusComment(snapshot)).toContain(`\n\n${line}\n`);
    const woken = replay([...waiting, stagePassed("implementer"), stageStarted("tester")]);
    expect(renderStoryCheck(woken).title).toBe("Attempt 1/3 running");
    expect(renderStatusComment(woken)).not.toContain("parked");
    const task = snapshot.tasks[0];
    if (!task) throw new Error("the story has its one task");
    const taskCheck = renderTaskCheck(snapshot, task);
    expect(taskCheck.title).toBe("Attempt 1/3 parked until 2026-01-01 15:00 UTC");
    expect(taskCheck.summary).toContain(
      "\n\n⏸️ Stage `implementer` is parked: every agent it may use is rate limited. It is tried again at 2026-01-01 15:00 UTC",
    );
  });

  it("show the final commit of a completed story", () => {
    const check = renderStoryCheck(replay(completedStory()));
    expect(check.title).toBe("Completed (attempt 1/3)");
    expect(check.summary).toBe(
      [
        "✅ Completed on attempt 1 of 3.",
        "",
        TABLE_HEAD,
        ...["implementer", "tester", "verifier", "documenter"].map((id) => `| ${id} | ✅ passed | 1 | 2.0 s |`),
        "",
        "Final commit: `def5678`",
      ].join("\n"),
    );
  });
});

describe("gate check runs", () => {
  it("provision: receipt, or failure with class, command, exit code and log tail", () => {
    expect(renderProvisionCheck(replay(completedStory()))).toEqual({
      title: "Provisioned",
      summary:
        "**Command:** `npm ci`\n**Duration:** 1.5 s\n\nReceipt `.harness-provisioned` written at the worktree root; every stage and gate entered a provisioned worktree.",
    });
    expect(renderProvisionCheck(replay(provisionBlockedStory()))).toEqual({
      title: "Provisioning failed: workspace-provision-failed",
      summary:
        "**Failure class:** `workspace-provision-failed`\n**Command:** `npm ci`\n**Exit code:** 1\n\nThis is blocked infrastructure, not an agent failure: no agent entered the worktree.\n\n#### Log tail\n```text\nnpm ERR! 404 Not Found\n```",
    });
  });

  it("verifier: suite command, exit code, output tail, verdict and findings", () => {
    const failing = replay([started(), gate(1, 0, "3 passing"), verdict(1, false)]);
    expect(renderVerifierCheck(failing)).toEqual({
      title: "Attempt 1: verdict fail",
      summary:
        "**Suite:** `npm test`\n**Exit code:** 0\n**Duration:** 800 ms\n\n**Verdict:** ❌ fail\n\n#### Findings\n- greeting is not exported\n\n#### Suite output tail\n```text\n3 passing\n```",
    });
    expect(renderVerifierCheck(replay([started(), gate(1, 2, "```\nboom")])).title).toBe("Attempt 1: suite failed (exit 2)");
    // Output holding a fence cannot close the block it is shown in.
    expect(renderVerifierCheck(replay([started(), gate(1, 2, "```\nboom")])).summary).toContain("````text\n```\nboom\n````");
  });

  it("verifier: the verdict claimed, the suite on the base and on the change side by side", () => {
    const baseline: HistoryEvent = {
      at: "2026-01-01T00:00:00.000Z",
      kind: "baseline.finished",
      taskId: "task-1",
      command: "npm test",
      commit: "0123456789abcdef0123456789abcdef01234567",
      exitCode: 1,
      timedOut: false,
      outputTail: "1 failing",
      durationMs: 700,
    };
    const summary = renderVerifierCheck(replay([started(), baseline, gate(1, 0, "3 passing"), verdict(1, true)])).summary;
    expect(summary).toContain(
      [
        "#### Claimed, base and change",
        "| | Result |",
        "|---|---|",
        "| Verifier's verdict (claimed) | ✅ pass |",
        "| Suite on the base commit `0123456789ab` | ❌ failed (exit 1) |",
        "| Suite on the change (attempt 1) | ✅ passed (exit 0) |",
      ].join("\n"),
    );
    expect(renderVerifierCheck(replay([started(), baseline, gate(1, 1, "1 failing")])).summary).toContain("| Verifier's verdict (claimed) | no verdict yet |");
  });

  it("clean-clone: command, interpreter and version, exit code, tail and commit; or why it did not run", () => {
    expect(renderCleanCloneCheck(replay([started(), cleanClone(1, 1, "FAIL fixture")]))).toEqual({
      title: "Attempt 1: failed in a fresh clone (exit 1)",
      summary:
        "**Command:** `npm test`\n**Interpreter:** `node v20.19.0`\n**Exit code:** 1\n**Commit:** `abc1234`\n**Duration:** 1.2 s\n\n#### Output tail\n```text\nFAIL fixture\n```",
    });
    const notRun: HistoryEvent = {
      at: "2026-01-01T00:00:00.000Z",
      kind: "clean_clone.finished",
      taskId: "task-1",
      stage: "verifier",
      attempt: 1,
      artifact: "clean-clone-result.json",
      result: { ran: false, command: "npm test", durationMs: 3, reason: "python3 not found on PATH" },
    };
    expect(renderCleanCloneCheck(replay([started(), notRun]))).toEqual({
      title: "Attempt 1: did not run",
      summary: "Did not run: python3 not found on PATH\n\n**Command:** `npm test`",
    });
  });

  it("redacts tokens and given secrets from tails and commands", () => {
    const token = `ghs_${"Z9".repeat(18)}`;
    const snapshot = replay([...provisionBlockedStory(`fetch https://x-access-token:${token}@example.test/r.git\nkey=s3cret-value`)]);
    const summary = renderProvisionCheck(snapshot, { secrets: ["s3cret-value"] }).summary;
    expect(summary).not.toContain(token);
    expect(summary).not.toContain("s3cret-value");
    expect(summary).toContain(`https://x-access-token:${REDACTED}@example.test/r.git\nkey=${REDACTED}`);
  });
});

describe("bounds", () => {
  const huge = `${"错误 ✗ 😀 ".repeat(60_000)}\n\`\`\`\nunclosed`;

  it("keep every check-run summary within 65,535 bytes with multibyte tails and closed fences", () => {
    const snapshots = [
      replay(provisionBlockedStory(huge)),
      replay([started(), gate(1, 1, huge), verdict(1, false)]),
      replay([started(), cleanClone(1, 1, huge)]),
      replay([
        ...provisionBlockedStory(),
        { at: "2026-01-01T00:00:00.000Z", kind: "story.blocked", taskId: "t", failureClass: "internal-error", detail: huge },
      ]),
    ];
    const outputs = snapshots.flatMap((snapshot) => [
      renderProvisionCheck(snapshot),
      renderVerifierCheck(snapshot),
      renderCleanCloneCheck(snapshot),
      renderStoryCheck(snapshot),
    ]);
    for (const output of outputs) {
      expect(utf8Bytes(output.summary)).toBeLessThanOrEqual(CHECK_RUN_OUTPUT_MAX_BYTES);
      expect(openFenceAtEnd(output.summary)).toBeUndefined();
      expect(output.summary.includes("\uFFFD")).toBe(false);
    }
    // The long detail of the blocked story was cut, and says so.
    expect(renderStoryCheck(snapshots[3]!).summary.endsWith("… truncated")).toBe(true);
  });

  // Huge text outside the output tails too (those are capped before the bound): commands,
  // findings and guidance reach a summary whole unless the summary itself is bounded.
  it("keep the verifier and provision summaries within 65,535 bytes when the command, findings or guidance are huge", () => {
    const at = "2026-01-01T00:00:00.000Z";
    const hugeCommand = `npm test -- ${"错误✗".repeat(30_000)}`;
    const hugeGate: HistoryEvent = {
      at,
      kind: "gate.finished",
      taskId: "task-1",
      stage: "verifier",
      attempt: 1,
      command: hugeCommand,
      exitCode: 1,
      timedOut: false,
      outputTail: "short",
      durationMs: 5,
    };
    const hugeVerdict: HistoryEvent = {
      at,
      kind: "verdict.recorded",
      taskId: "task-1",
      stage: "verifier",
      attempt: 1,
      verdict: "fail",
      findings: Array.from({ length: 2_000 }, (_, i) => `finding ${i}: ${"😀".repeat(20)}`),
      retryGuidance: "错误 ".repeat(40_000),
    };
    const provisionedHuge: HistoryEvent = {
      at,
      kind: "provision.succeeded",
      taskId: "task-1",
      cmd: hugeCommand,
      durationMs: 5,
      skipped: false,
      phase: "create",
    };
    const provisionFailedHuge: HistoryEvent = { at, kind: "provision.failed", taskId: "task-1", cmd: hugeCommand, exitCode: 1, logTail: "short" };
    const outputs = [
      renderVerifierCheck(replay([started(), hugeGate])),
      renderVerifierCheck(replay([started(), gate(1, 1), hugeVerdict])),
      renderProvisionCheck(replay([started(), provisionedHuge])),
      renderProvisionCheck(replay([started(), provisionFailedHuge])),
    ];
    for (const output of outputs) {
      // Well past the bound before it (the fixture is live), and within it after.
      expect(utf8Bytes(output.summary)).toBeLessThanOrEqual(CHECK_RUN_OUTPUT_MAX_BYTES);
      expect(utf8Bytes(output.summary)).toBeGreaterThan(CHECK_RUN_OUTPUT_MAX_BYTES - 4096);
      expect(openFenceAtEnd(output.summary)).toBeUndefined();
      expect(output.summary.includes("\uFFFD")).toBe(false);
    }
  });

  it("keep the status comment within 65,536 characters", () => {
    const snapshot = replay([
      ...provisionBlockedStory(),
      { at: "2026-01-01T00:00:00.000Z", kind: "story.blocked", taskId: "t", failureClass: "internal-error", detail: huge },
    ]);
    const comment = renderStatusComment(snapshot);
    expect(comment.length).toBeLessThanOrEqual(COMMENT_MAX_CHARS);
    expect(comment.startsWith(STATUS_MARKER)).toBe(true);
    expect(openFenceAtEnd(comment)).toBeUndefined();
    expect(comment.endsWith("```\n\n… truncated")).toBe(true);
  });

  it("help lists every command", () => {
    expect(renderHelp()).toBe(
      "story-harness commands (write access needed), at the start of a line:\n\n- `/harness retry-blocked`: re-admit a blocked story in a fresh worktree (on the story's pull request or issue)\n- `/harness revise`: revise the story's open pull request with the text that follows (counts as a round of `iterate.max_rounds`)\n- `/harness accept-integrity`: re-admit a blocked story with the test-integrity gate's findings accepted in your name (a deleted or skipped test, a changed test command or CI workflow the story needs)\n- `/harness help`: list these commands",
    );
  });
});
