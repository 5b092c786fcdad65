/** The texts the App posts about a story outside its check runs: pure renderers, bounded, and safe with hostile details. */
import { describe, expect, it } from "@jest/globals";
import {
  renderLowDisk,
  renderPullTitle,
  renderPushFailed,
  renderPushRefusedDetail,
  renderPushStillWaiting,
  renderSandboxUnavailable,
  renderStoryStopped,
  renderTooManyInterruptions,
} from "../../src/github/report/index.js";
import { renderMovedCheck, renderInterruptedCheck } from "../../src/github/report/render/index.js";
import { renderPullBody } from "../../src/github/report/render/index.js";
import { renderPushRefusedCheck } from "../../src/github/report/render/index.js";
import { fencedBlocks, openFenceAtEnd } from "../../src/text/index.js";

describe("the story's pull request", () => {
  it("has a one-line title within GitHub's 256 characters, whatever the issue's title", () => {
    expect(renderPullTitle({ number: 7, title: "Greet" })).toBe("Story #7: Greet");
    const long = renderPullTitle({ number: 123456, title: `${"é".repeat(300)}` });
    expect(long.length).toBe(256);
    expect(renderPullTitle({ number: 8, title: "two\nlines\u2028here" })).toBe("Story #8: two lines here");
    expect(renderPullBody(7)).toMatch(/^Closes #7\n\n/);
  });
});

describe("a story stopped outside its reporter", () => {
  it("shows the detail in a code block that the detail cannot close", () => {
    const detail = "fatal: oops\n```\n@everyone see #1\n````";
    const body = renderStoryStopped("could not start", "git-failed", detail);
    expect(body).toMatch(/^story-harness: this story could not start \(git-failed\):/);
    expect(openFenceAtEnd(body)).toBeUndefined();
    expect(fencedBlocks(body).map((block) => block.body)).toEqual([detail]);
  });

  it("names a refused push, with what the run had done and where its work is kept, when the job knows", () => {
    const sha = "a".repeat(40);
    expect(renderPushRefusedDetail({ branch: "harness/story-3", sha, refusal: "remote: GH001: Large files detected." })).toBe(
      "GitHub refused the push of aaaaaaaaaaaa to harness/story-3, so the pull request does not hold this work.\n\nremote: GH001: Large files detected.",
    );
    const full = renderPushRefusedDetail({ branch: "b", sha, refusal: "r", was: "completed", bundle: { kept: true, name: "unpushed-work.bundle" } });
    expect(full).toContain("(the run had completed).");
    expect(full).toContain("kept in the run directory as unpushed-work.bundle.");
    expect(renderPushRefusedDetail({ branch: "b", sha, refusal: "r", bundle: { kept: false, name: "x" } })).toMatch(/could not be saved as a bundle\.$/);
    const check = renderPushRefusedCheck("b", sha, "```\nremote: no");
    expect(check.title).toBe("Blocked: push-refused");
    expect(openFenceAtEnd(check.summary)).toBeUndefined();
  });
});

describe("check runs the App closes itself", () => {
  it("say where the check moved, or that the App stopped", () => {
    expect(renderMovedCheck("b".repeat(40))).toEqual({ title: "Moved to the pushed commit", summary: expect.stringContaining("b".repeat(40)) });
    expect(renderInterruptedCheck().title).toBe("Interrupted");
  });
});

describe("why the runner stopped a story", () => {
  it("names the cause and what to do next", () => {
    expect(renderSandboxUnavailable("bwrap is not installed")).toBe(
      "The sandbox cannot run on this host, so this story was not started: bwrap is not installed.",
    );
    expect(renderLowDisk(50 * 1024 * 1024 + 5, 1024 * 1024 * 1024)).toMatch(
      /^Only 50 MiB are free .*asks for 1024 MiB.*\/harness retry-blocked or label the issue again\.$/,
    );
    expect(renderPushStillWaiting()).toContain("still waiting to be pushed");
    expect(renderTooManyInterruptions(3)).toBe(
      "The App stopped 3 times while this story ran; it was not resumed again. Use /harness retry-blocked to run it once more.",
    );
    expect(renderPushFailed("c".repeat(40), "harness/story-1", 3, "connection reset")).toBe(
      "Pushing cccccccccccc to harness/story-1 failed 3 times: connection reset",
    );
  });
});
