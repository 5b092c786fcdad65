/** The story's check run while its push waits: a pure renderer, bounded to GitHub's limits, safe with hostile answers. */
import { describe, expect, it } from "@jest/globals";
import { CHECK_RUN_OUTPUT_MAX_BYTES, REDACTED, TRUNCATION_NOTE, utf8Bytes } from "../../src/github/index.js";
import { PUSH_WAITING_WHY_MAX_BYTES, renderPushWaitingCheck } from "../../src/github/report/render/index.js";
import { fencedBlocks, openFenceAtEnd } from "../../src/text/index.js";

const sha = "0123456789abcdef0123456789abcdef01234567";
const current = { title: "Attempt 1 of 3", summary: "⏳ Attempt 1 of 3 is running.\n\n| Stage | State |", text: "the stage's log" };

describe("the push-waiting check run", () => {
  it("says above what the check run showed that the new commit waits, what the last try got, and that the end follows", () => {
    const output = renderPushWaitingCheck(current, {
      branch: "harness/story-3",
      sha,
      why: "no status: error: RPC failed; HTTP 502\r\nfatal: the remote end hung up\n",
    });
    expect(output.title).toBe("Push waiting");
    expect(output.summary).toBe(
      "⏳ **Push waiting:** the branch's new commit `0123456789ab` could not be pushed to `harness/story-3` yet; " +
        "the story's end is reported once it goes through. The App keeps retrying; its last try got:\n\n" +
        "```text\nno status: error: RPC failed; HTTP 502\nfatal: the remote end hung up\n```\n\n---\n\n" +
        current.summary,
    );
    expect(output.text).toBe(current.text);
    const silent = renderPushWaitingCheck({ title: "t", summary: "s" }, { branch: "b", sha, why: "  " });
    expect(silent.summary).toContain("```text\nno answer\n```");
    expect(silent.text).toBeUndefined();
  });

  it("redacts tokens and the story's secrets from the answer, and a fence in it cannot close its block", () => {
    const token = "ghs_" + "A1".repeat(18);
    const why = `fatal: unable to access 'https://x-access-token:${token}@github.example/o/r.git/': 502\n\`\`\`\n@org/team see #1 hunter2hunter2`;
    const output = renderPushWaitingCheck(current, { branch: "b", sha, why }, ["hunter2hunter2"]);
    expect(output.summary).not.toContain(token);
    expect(output.summary).not.toContain("hunter2hunter2");
    expect(output.summary).toContain(`x-access-token:${REDACTED}@`);
    // The answer stays inside its own block: the mention and the reference are code, not Markdown.
    const blocks = fencedBlocks(output.summary);
    expect(blocks).toHaveLength(1);
    expect(blocks[0]?.body).toContain("@org/team see #1");
    expect(openFenceAtEnd(output.summary)).toBeUndefined();
  });

  it("stays within GitHub's 65,535 bytes, the line first, however long the answer and the summary it goes above", () => {
    const why = "é".repeat(10_000);
    const output = renderPushWaitingCheck({ title: "t", summary: "```\n" + "€".repeat(40_000) }, { branch: "b", sha, why });
    expect(utf8Bytes(output.summary)).toBeLessThanOrEqual(CHECK_RUN_OUTPUT_MAX_BYTES);
    expect(output.summary.startsWith("⏳ **Push waiting:**")).toBe(true);
    const quoted = fencedBlocks(output.summary)[0]?.body ?? "";
    expect(utf8Bytes(quoted)).toBeLessThanOrEqual(PUSH_WAITING_WHY_MAX_BYTES + utf8Bytes(TRUNCATION_NOTE));
    expect(quoted.endsWith(TRUNCATION_NOTE)).toBe(true);
    expect(openFenceAtEnd(output.summary)).toBeUndefined();
    expect(output.summary.endsWith(TRUNCATION_NOTE)).toBe(true);
  });
});
