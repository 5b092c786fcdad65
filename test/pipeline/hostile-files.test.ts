/**
 * Files an agent plants where the App reads (issue 30, findings 3 and 7): the receipt as a FIFO,
 * the verdict as a symlink to the App's secret, as a 1.5 GiB sparse file, as a FIFO. Whole
 * stories with the scripted agent in the real sandbox. Before the bounded reader, the FIFOs
 * blocked the App's thread for good (the test would never end), the symlink's target was read
 * as the verdict, and the sparse file was read into memory whole.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git } from "../../src/workspace/index.js";
import { removeTempDirs } from "../support/tmp.js";
import { launches, makeScenario, ofKind, runScenario, scriptedConfig } from "./helpers.js";

afterAll(removeTempDirs);

describe("files an agent plants where the App reads", () => {
  it("a FIFO as the receipt counts as no receipt: the next seat re-provisions and the story completes", async () => {
    const s = await makeScenario();
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, "fifo-receipt"));
    expect(outcome.status).toBe("completed");
    // The implementer planted the FIFO; the tester's admission read it as "not provisioned" and provisioned afresh.
    expect(ofKind(journal, "provision.succeeded").map((event) => event.phase)).toEqual(["worktree", "seat:tester"]);
    const files = await git(["show", "--name-only", "--format=", outcome.commit ?? ""], { cwd: s.repo });
    expect(files).not.toContain(".harness-provisioned");
  });

  it.each([
    ["symlink-verdict", "verdict.json is a symlink, which is not followed"],
    ["huge-verdict", `verdict.json is larger than ${1024 * 1024} bytes (${1536 * 1024 * 1024})`],
    ["fifo-verdict", "verdict.json is not a regular file"],
  ])("%s: refused as an invalid verdict, the verifier asked again, and nothing of the planted file used", async (scenario, reason) => {
    const s = await makeScenario();
    // Followed, this would be a passing verdict carrying the App's secret into the journal and the check run.
    writeFileSync(join(s.dir, "app-secret.json"), JSON.stringify({ verdict: "pass", findings: ["THE APP'S SECRET"] }));
    const { outcome, journal } = await runScenario(s, scriptedConfig(s, scenario));
    expect({ status: outcome.status, detail: outcome.detail }).toEqual({ status: "completed", detail: outcome.detail });
    expect(launches(s)).toEqual(["implementer 1", "tester 1", "verifier 1", "verifier 1", "documenter 1"]);
    const rerunPrompt = readFileSync(join(outcome.runDir, "attempts", "1", "verifier", "prompt-rerun.md"), "utf8");
    expect(rerunPrompt).toContain(reason);
    expect(ofKind(journal, "verdict.recorded")).toEqual([expect.objectContaining({ verdict: "pass", findings: ["checked on the re-run"] })]);
    expect(JSON.stringify(journal)).not.toContain("THE APP'S SECRET");
  });
});
