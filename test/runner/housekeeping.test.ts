import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freeBytes, housekeepingFromEnv, lowDiskReason, pruneRuns } from "../../src/runner/housekeeping.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

/** A run folder with a journal, its times set `ageDays` back. */
function run(home: string, story: string, id: string, ageDays: number): string {
  const dir = join(home, "runs", story, id);
  mkdirSync(join(dir, "logs"), { recursive: true });
  writeFileSync(join(dir, "execution-history.ndjson"), "{}\n");
  const at = new Date(Date.now() - ageDays * 24 * 60 * 60_000);
  for (const path of [join(dir, "logs"), join(dir, "execution-history.ndjson"), dir]) utimesSync(path, at, at);
  return dir;
}

describe("housekeeping", () => {
  it("reads HARNESS_RETENTION_DAYS and HARNESS_MIN_FREE_MB, naming a bad one", () => {
    expect(housekeepingFromEnv({})).toEqual({ retentionDays: 14, minFreeBytes: 1024 * 1024 * 1024 });
    expect(housekeepingFromEnv({ HARNESS_RETENTION_DAYS: "3", HARNESS_MIN_FREE_MB: "10" })).toEqual({ retentionDays: 3, minFreeBytes: 10 * 1024 * 1024 });
    expect(() => housekeepingFromEnv({ HARNESS_RETENTION_DAYS: "0" })).toThrow(/HARNESS_RETENTION_DAYS="0" must be a positive integer/);
  });

  it("removes run directories older than the retention period and keeps the rest", () => {
    const home = makeTempDir();
    const old = run(home, "7", "20260101T000000Z-aaaaaa", 30);
    const recent = run(home, "7", "20261130T000000Z-bbbbbb", 2);
    const lonely = run(home, "8", "20260102T000000Z-cccccc", 20);
    expect(pruneRuns(home, 14).sort()).toEqual([old, lonely].sort());
    expect(existsSync(recent)).toBe(true);
    expect(existsSync(join(home, "runs", "8"))).toBe(false);
    expect(pruneRuns(join(home, "nothing-here"), 14)).toEqual([]);
  });

  it("refuses a story on a nearly full disk, naming what to do", () => {
    const home = join(makeTempDir(), "not-made-yet");
    expect(lowDiskReason(home, 1)).toBeUndefined();
    const reason = lowDiskReason(home, freeBytes(join(home, "..")) * 2 + 1024 * 1024 * 1024);
    expect(reason).toMatch(/^Only \d+ MiB are free .*HARNESS_MIN_FREE_MB.*retry-blocked/);
  });
});
