/**
 * The allocation meter of the webhook bench counts a window's allocated, and retained, bytes
 * whatever the collector did meanwhile (a child process allocates known amounts).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readAllocWindow } from "../../bench/lib/alloc-meter.js";
import { exec } from "../../src/exec/index.js";
import { until } from "../support/poll.js";

const MIB = 1024 * 1024;

it("counts what a window allocated and what it retained", async () => {
  const dir = mkdtempSync(join(tmpdir(), "harness-alloc-meter-"));
  const stop = new AbortController();
  let pid: number | undefined;
  const meterFile = join(dir, "meter.json");
  const readyFile = join(dir, "ready");
  const child = exec([process.execPath, "--expose-gc", "--import", "tsx", resolve("test/bench/alloc-child.ts"), meterFile, readyFile, "64", "8"], {
    cwd: process.cwd(),
    signal: stop.signal,
    logPath: join(dir, "child.log"),
    onSpawn: (spawned) => (pid = spawned),
  });
  try {
    await until("the child to allocate", () => existsSync(readyFile), 60_000);
    // The first window: start-up (tsx, the module graph) and the 64 MiB thrown away and 8 MiB kept.
    const first = await readAllocWindow(pid as number, meterFile, 0);
    expect(first.seq).toBe(1);
    expect(first.allocatedBytes).toBeGreaterThan(72 * MIB);
    expect(first.scavenges).toBeGreaterThan(0);
    // The second: nothing but the meter's own work; what is live is what was kept.
    const second = await readAllocWindow(pid as number, meterFile, first.seq);
    expect(second.seq).toBe(2);
    expect(second.allocatedBytes).toBeLessThan(4 * MIB);
    expect(second.allocatedBytes).toBeGreaterThanOrEqual(0);
    expect(Math.abs(second.liveBytes - first.liveBytes)).toBeLessThan(2 * MIB);
    expect(first.liveBytes).toBeGreaterThan(8 * MIB);
  } finally {
    stop.abort();
    await child;
    rmSync(dir, { recursive: true, force: true });
  }
});
