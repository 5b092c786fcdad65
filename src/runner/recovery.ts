/**
 * What a previous run of the App left behind when it was killed (kill -9, OOM, power loss):
 * processes it started that still run beside the resumed story, and clean-clone scratch
 * folders in TMPDIR. Both were recorded when they started; here they are ended and removed.
 */
import { join } from "node:path";
import { ProcessLedger, reapOrphans } from "../exec/index.js";
import { reapScratch } from "../workspace/index.js";
import type { RunnerLog } from "./log.js";

/** The ledger of the processes a runner starts, under `<harnessHome>/run/processes`. */
export function processLedger(harnessHome: string): ProcessLedger {
  return new ProcessLedger(join(harnessHome, "run", "processes"));
}

/**
 * Ends the orphans of a dead run (synchronously, before any job resumes) and removes the
 * scratch folders of dead owners (in the background). Logs what it found.
 */
export function recoverAfterCrash(harnessHome: string, log: RunnerLog, scratchRoot?: string): Promise<string[]> {
  const reaped = reapOrphans(processLedger(harnessHome).dir);
  for (const orphan of reaped) log.warn({ pid: orphan.pid, program: orphan.program }, "ended a process left running by a previous run of the App");
  return reapScratch(scratchRoot).then(
    (removed) => {
      for (const dir of removed) log.warn({ dir }, "removed a clean-clone scratch folder left by a previous run of the App");
      return removed;
    },
    (error: unknown) => {
      log.warn({ err: { message: String(error) } }, "could not remove scratch folders of a previous run");
      return [];
    },
  );
}
