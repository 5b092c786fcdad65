/** What a WorkspaceProvisionError carries: its fields as given, defaults, and the bounded tail. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { WorkspaceProvisionError } from "../../src/workspace/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

describe("WorkspaceProvisionError", () => {
  it("keeps what it was given, named and classed as blocked provisioning", () => {
    const dir = makeTempDir("harness-prov-error-");
    const logPath = join(dir, "provision.log");
    writeFileSync(logPath, "installing\nnpm error code E404\n");
    const error = new WorkspaceProvisionError("it failed", {
      cmd: "npm ci",
      exitCode: 1,
      logPath,
      logTail: "last line",
      taskId: "t-1",
      phase: "seat",
      timedOut: true,
      attempts: 2,
    });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("WorkspaceProvisionError");
    expect(error.message).toBe("it failed");
    expect({ ...error }).toEqual({
      name: "WorkspaceProvisionError",
      failureClass: "workspace-provision-failed",
      cmd: "npm ci",
      exitCode: 1,
      logPath,
      // The log's error line first (the last lines do not show it), then the last lines.
      logTail: expect.stringMatching(/npm error code E404[\s\S]*last line$/),
      taskId: "t-1",
      phase: "seat",
      timedOut: true,
      attempts: 2,
    });
  });

  it("defaults: not timed out, no attempts, no task or phase; an empty tail stays empty even when the log has error lines", () => {
    const dir = makeTempDir("harness-prov-error-");
    const logPath = join(dir, "provision.log");
    writeFileSync(logPath, "npm error code E404\n");
    const error = new WorkspaceProvisionError("before anything ran", { cmd: null, exitCode: null, logPath, logTail: "" });
    expect(error.timedOut).toBe(false);
    expect(error.attempts).toBe(0);
    expect(error.taskId).toBeUndefined();
    expect(error.phase).toBeUndefined();
    expect(error.logTail).toBe("");
    expect(new WorkspaceProvisionError("x", { cmd: null, exitCode: null, logPath, logTail: "", timedOut: false, attempts: 1 })).toMatchObject({
      timedOut: false,
      attempts: 1,
    });
  });
});
