/** `harness demo` from a clone: the whole loop a maintainer would see, with no network and no account. */
import { join, resolve } from "node:path";
import { exec } from "../../src/exec/index.js";
import { jest } from "@jest/globals";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

jest.setTimeout(300_000);
afterAll(removeTempDirs);

describe("harness demo", () => {
  it("shows a completed story, a blocked one, and the blocked one completing after its retry", async () => {
    const result = await exec([process.execPath, resolve("bin/harness.js"), "demo"], {
      cwd: makeTempDir("harness-demo-test-"),
      captureStdout: true,
      timeoutMs: 240_000,
    });
    const out = result.stdout?.toString("utf8") ?? "";
    expect([result.exitCode, result.tail]).toEqual([0, expect.any(String)]);
    const [first = "", blocked = "", retried = ""] = out.split(/^━━ \d\. /m).slice(1);
    expect(first).toContain("— open, draft (branch harness/story-1)");
    expect(first).toContain("— open, ready for review (branch harness/story-1)");
    for (const check of ["harness / provision", "harness / verifier", "harness / clean-clone", "harness / story"])
      expect(first).toMatch(new RegExp(`✓ ${check} — passed`));
    expect(first).toContain("<!-- story-harness:status -->");
    expect(blocked).toContain("✗ harness / story — needs your action: Blocked: retry-ceiling   [Retry]");
    // No identifier of GitHub's API reaches the reader.
    expect(out).not.toMatch(/action_required|in_progress|timed_out/);
    expect(blocked).toContain("— open, draft (branch harness/story-3)");
    expect(retried).toContain("/harness retry-blocked");
    expect(retried).toContain("✓ harness / story — passed");
    expect(retried).toContain("— open, ready for review (branch harness/story-3)");
  });

  it("answers --help", async () => {
    const result = await exec([process.execPath, join(resolve("."), "bin/harness.js"), "demo", "--help"], {
      cwd: resolve("."),
      captureStdout: true,
      timeoutMs: 60_000,
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout?.toString("utf8")).toContain("Usage: harness demo");
  });
});
