/**
 * The tail a maintainer reads after a failed provisioning (`WorkspaceProvisionError.logTail`):
 * the log's error lines that the last lines do not show, a marker, then the last lines, within
 * 20 lines and 64 KiB; the last lines alone when the log has no such line or cannot be read.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { WorkspaceProvisionError } from "../../src/workspace/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

const MARKER = "[… the error lines above come from earlier in the log; its last lines follow …]";

/** The tail made from `lastLines` and a log holding `log` (no log file at all when undefined). */
function tailOf(log: string | Buffer | undefined, lastLines: string): string {
  const logPath = join(makeTempDir("harness-prov-tail-"), "provision.log");
  if (log !== undefined) writeFileSync(logPath, log);
  return new WorkspaceProvisionError("failed", { cmd: "npm ci", exitCode: 1, logPath, logTail: lastLines }).logTail;
}

/** `count` numbered lines `<prefix>0` … */
const numbered = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

describe("provisioning tail: the last lines alone", () => {
  it("keeps the last 20 lines when there is no log to read", () => {
    expect(tailOf(undefined, numbered("l", 30).join("\n"))).toBe(numbered("l", 30).slice(10).join("\n"));
  });

  it("keeps the last 20 lines when the log has no error line", () => {
    expect(tailOf("installing\nnpm http fetch GET 200\ndone\n", numbered("l", 30).join("\n"))).toBe(numbered("l", 30).slice(10).join("\n"));
  });
});

describe("provisioning tail: error lines from earlier in the log", () => {
  it("puts them first, then the marker, then as many last lines as the 20 leave", () => {
    const last = numbered("l", 25).join("\n");
    expect(tailOf("fetching\nnpm error code E404\nmore\n", last)).toBe(["npm error code E404", MARKER, ...numbered("l", 25).slice(7)].join("\n"));
  });

  it("keeps the first 8 distinct error lines, each once, in the order of the log", () => {
    const errors = numbered("error: e", 12);
    const log = [errors[0], errors[1], errors[0], "ok", errors[1], ...errors.slice(2)].join("\n");
    expect(tailOf(log, numbered("l", 25).join("\n"))).toBe([...errors.slice(0, 8), MARKER, ...numbered("l", 25).slice(14)].join("\n"));
  });

  it("leaves out an error line the last lines already show, however it is indented", () => {
    const last = ["x", "    error: shown"].join("\n");
    expect(tailOf("  error: shown   \nfetching\n", last)).toBe(last);
    expect(tailOf("error: shown\n", last)).toBe(last);
  });

  it("drops trailing blanks and carriage returns, strips terminal escapes, and cuts a line at 1000 characters", () => {
    const long = `error: ${"x".repeat(2000)}`;
    const log = [
      "error: blanks   ",
      "error: windows\r",
      "\u001b[31mnpm ERR! code E404\u001b[0m",
      "\u001b[1;31merror\u001b[0m: colours with parameters",
      "\u001b[2 q\u001b[mfatal: an escape with an intermediate byte",
      long,
    ].join("\n");
    expect(tailOf(log, "last")).toBe(
      [
        "error: blanks",
        "error: windows",
        "npm ERR! code E404",
        "error: colours with parameters",
        "fatal: an escape with an intermediate byte",
        long.slice(0, 1000),
        MARKER,
        "last",
      ].join("\n"),
    );
  });

  it("reads a log of exactly 16 MiB, and not one byte larger (its last lines alone)", () => {
    const head = "npm error code E404\n";
    const sixteen = 16 * 1024 * 1024;
    const fill = (size: number): Buffer => Buffer.concat([Buffer.from(head), Buffer.alloc(size - head.length, 0x2e)]);
    expect(tailOf(fill(sixteen), "last")).toBe(["npm error code E404", MARKER, "last"].join("\n"));
    expect(tailOf(fill(sixteen + 1), "last")).toBe("last");
  });

  it("keeps the error lines when the result is exactly 64 KiB, and the last lines alone when it would be one byte more", () => {
    // One error line leaves room for 18 last lines; their size decides the combined size.
    const error = "error: boom";
    const overhead = Buffer.byteLength(`${error}\n${MARKER}\n`);
    const lastLines = (bytes: number): string => {
      const body = bytes - 17; // 18 lines joined by 17 newlines
      const each = Math.floor(body / 18);
      const lines = Array.from({ length: 18 }, (_, i) => "y".repeat(i === 0 ? body - each * 17 : each));
      return ["a", "b", ...lines].join("\n");
    };
    const exact = lastLines(64 * 1024 - overhead);
    const kept = tailOf(`${error}\n`, exact);
    expect(Buffer.byteLength(kept)).toBe(64 * 1024);
    expect(kept).toBe([error, MARKER, ...exact.split("\n").slice(2)].join("\n"));
    const over = lastLines(64 * 1024 - overhead + 1);
    expect(tailOf(`${error}\n`, over)).toBe(over);
  });
});

describe("provisioning tail: which lines carry the error", () => {
  it.each([
    "npm ERR! code ELIFECYCLE",
    "npm error errno 1",
    "npm error Missing: left-pad@1.3.0 from lock file",
    "npm error peer-dep_2: conflicting",
    "npm error A: one letter",
    "ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with frozen-lockfile",
    "error: could not compile `app`",
    "error[E0432]: unresolved import",
    "error[7]: a code without its letter",
    "   error: indented",
    "error\ttab separated",
    "  error\tindented, tab separated",
    "ERROR: No matching distribution found",
    "  ERROR: indented",
    "yarn error An unexpected error occurred",
    "yarnpkg error An unexpected error occurred",
    "  yarn error indented",
    " error Command failed with exit code 1.",
    "remote: fatal: could not read",
    "sh: 1: pnpm: not found",
    "bash: pnpm: command not found",
    "npm ci can only install packages in sync",
    "Error: Cannot find module 'left-pad'",
    "npm warn ERESOLVE overriding",
    "GET 404 E404 Not Found",
    "open ENOENT: no such file",
    "mkdir EACCES: permission denied",
    "getaddrinfo ENOTFOUND registry.example",
    "connect ETIMEDOUT 10.0.0.1",
    "connect ECONNREFUSED 127.0.0.1",
  ])("%s", (line) => {
    expect(tailOf(`starting\n${line}\n`, "done")).toBe([line, MARKER, "done"].join("\n"));
  });

  it.each([
    "npm error   --usage-option-1",
    "npm error",
    "npm error 1abc: a name must start with a letter",
    "npm warn code EXYZ",
    "an error: in the middle",
    "terror: inside a word",
    "terror strikes",
    "errors: 0",
    "error",
    "error[]: no code",
    "error[E]: no digits",
    "NOERROR: inside a word",
    "mystery error here",
    "the yarn error is elsewhere",
    "myyarn error here",
    "fatal without a colon",
    "command not found without a colon",
    "XENOENT ENOENTS E4040 EACCESS",
    "cannot find module",
  ])("not: %s", (line) => {
    expect(tailOf(`starting\n${line}\n`, "done")).toBe("done");
  });
});
