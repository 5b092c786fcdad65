import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { asyncJsonLog, LOG_BATCH_BYTES, LOG_FLUSH_MS } from "../../src/cli/json-log.js";
import { exec } from "../../src/exec/index.js";
import { eventually } from "../support/poll.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

describe("asyncJsonLog", () => {
  it("keeps Probot's own logger unless the format is JSON, or a setting only Probot's logger knows is used", () => {
    expect(asyncJsonLog({})).toBeUndefined();
    expect(asyncJsonLog({ LOG_FORMAT: "pretty" })).toBeUndefined();
    expect(asyncJsonLog({ LOG_FORMAT: "json", SENTRY_DSN: "https://key@sentry.example/1" })).toBeUndefined();
    expect(asyncJsonLog({ LOG_FORMAT: "json", LOG_LEVEL_IN_STRING: "true" })).toBeUndefined();
    expect(asyncJsonLog({ LOG_FORMAT: "json", LOG_MESSAGE_KEY: "message" })).toBeUndefined();
  });

  it("logs JSON at LOG_LEVEL (info when unset or unknown) through an asynchronous destination", () => {
    const log = asyncJsonLog({ LOG_FORMAT: "json", LOG_LEVEL: "warn" });
    expect(log?.level).toBe("warn");
    expect(asyncJsonLog({ LOG_FORMAT: "json" })?.level).toBe("info");
    expect(asyncJsonLog({ LOG_FORMAT: "json", LOG_LEVEL: "loud" } as unknown as NodeJS.ProcessEnv)?.level).toBe("info");
    // The destination is sonic-boom on stdout in its asynchronous mode: no write blocks the event loop.
    const stream = (log as unknown as Record<symbol, { sync?: boolean; fd?: number; minLength?: number; _periodicFlush?: number }>)[pino.symbols.streamSym];
    expect(stream?.sync).toBe(false);
    expect(stream?.fd).toBe(1);
    // Lines gathered into batches, each written within LOG_FLUSH_MS however few they are.
    expect(stream?.minLength).toBe(LOG_BATCH_BYTES);
    expect(stream?._periodicFlush).toBe(LOG_FLUSH_MS);
  });

  it("writes a lone line while the process lives, and what is left when it exits", async () => {
    const dir = makeTempDir();
    const logPath = join(dir, "out.log");
    const go = join(dir, "go");
    const child = exec([process.execPath, "--import", "tsx", join("test", "cli", "json-log-child.ts"), go], {
      cwd: process.cwd(),
      logPath,
      timeoutMs: 120_000,
    });
    const read = (): string => {
      try {
        return readFileSync(logPath, "utf8");
      } catch {
        return "";
      }
    };
    // One line of about a hundred bytes, far from a batch's 4 KiB: written by the periodic flush.
    const first = await eventually("the first line", () => (read().includes('"first line"') ? read() : undefined));
    expect(first).not.toContain("last line");
    writeFileSync(go, "");
    expect((await child).exitCode).toBe(0);
    const lines = read()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { msg: string; step: number });
    expect(lines.map((line) => [line.msg, line.step])).toEqual([
      ["first line", 1],
      ["last line", 2],
    ]);
  });
});
