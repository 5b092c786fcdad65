/**
 * Counting the child processes a piece of the App starts: every process goes through src/exec,
 * which records each start in its step scope's ledger; this ledger only counts them (by
 * program). Real processes, nothing mocked; only the App's own children are seen, not what they
 * start in turn.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessLedger, runInStepScope } from "../../src/exec/index.js";

class CountingLedger extends ProcessLedger {
  readonly programs: string[] = [];

  override started(_pid: number, program: string): void {
    this.programs.push(program);
  }

  override ended(): void {
    // Nothing was written.
  }
}

/** Runs `work` and returns its result with the programs of the processes it started, in order. */
export async function countProcesses<T>(work: () => Promise<T>): Promise<{ result: T; programs: string[] }> {
  const ledger = new CountingLedger(join(mkdtempSync(join(tmpdir(), "harness-count-")), "ledger"));
  const result = await runInStepScope({ ledger }, work);
  return { result, programs: ledger.programs };
}
