/**
 * Two processes on one host (two Apps, the App and a `harness run`, two test workers) share the
 * temporary folder: each one's start reaps the clean-clone scratch of dead owners. A scratch
 * made while another process reaps must never be taken for a dead owner's: its owner record is
 * either whole or absent, never half-written (a reaper once read an empty record and removed a
 * live check's clone under it: "working directory … does not exist").
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { exec } from "../../src/exec/index.js";
import { makeScratch, removeScratch } from "../../src/workspace/clean-clone/scratch.js";
import { eventually } from "../support/poll.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

const DIST_SCRATCH = pathToFileURL(join(import.meta.dirname, "..", "..", "dist", "workspace", "clean-clone", "scratch.js")).href;

describe("clean-clone scratch made while another process reaps", () => {
  it("is never removed as a dead owner's", async () => {
    const root = makeTempDir("harness-scratch-race-");
    const signals = makeTempDir("harness-scratch-race-signals-");
    const [ready, stop] = [join(signals, "ready"), join(signals, "stop")];
    // The other process: reaps the folder again and again until told to stop, and says how often it ran.
    const reaper = `
      import { existsSync, writeFileSync } from "node:fs";
      const { reapScratch } = await import(${JSON.stringify(DIST_SCRATCH)});
      let rounds = 0, removed = 0;
      while (!existsSync(${JSON.stringify(stop)})) {
        removed += (await reapScratch(${JSON.stringify(root)})).length;
        if ((rounds += 1) === 1) writeFileSync(${JSON.stringify(ready)}, "");
      }
      console.log(JSON.stringify({ rounds, removed }));
    `;
    const other = exec([process.execPath, "--input-type=module", "-e", reaper], { cwd: root, captureStdout: true, timeoutMs: 120_000 });
    // Made only once the other process reaps: from then on every make races a reap.
    let ended: string | undefined;
    void other.then((result) => (ended = `the reaper ended first (exit ${String(result.exitCode)}): ${result.tail}`));
    await eventually("the reaper's first round", () => (existsSync(ready) ? true : ended === undefined ? undefined : Promise.reject(new Error(ended))), 60_000);
    const made: string[] = [];
    for (let round = 0; round < 60; round += 1) made.push(...(await Promise.all(Array.from({ length: 10 }, () => makeScratch(root)))));
    writeFileSync(stop, "");
    const ran = await other;
    expect(ran.exitCode).toBe(0);
    const seen = JSON.parse(ran.stdout?.toString() ?? "{}") as { rounds: number; removed: number };
    expect(seen.rounds).toBeGreaterThan(1);
    // Every scratch was live the whole time: none went.
    expect(made.filter((dir) => !existsSync(dir))).toEqual([]);
    expect(seen.removed).toBe(0);
    await Promise.all(made.map((dir) => removeScratch(dir)));
  });
});
