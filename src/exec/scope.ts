/**
 * The step a child process belongs to: the stop signal of the story it serves, and the ledger
 * its start is recorded in. Set once by the runner around a job, so that every process the job
 * starts — provisioning, agents, suites, the clean-clone check, git — is ended by SIGTERM and
 * recorded for a restart after kill -9, without threading both through every call on the way.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { ProcessLedger } from "./ledger.js";

export interface StepScope {
  /** Ends every process started within the scope (in addition to a call's own signal). */
  signal?: AbortSignal;
  /** Where each process started within the scope is recorded until it ends. */
  ledger?: ProcessLedger;
  /**
   * How much nicer than the App each process started within the scope runs, from its start
   * (through `nice -n`; its children inherit it): work off the critical path (the baseline beside a seat) yields the
   * CPU to what the story waits for. A program that is not there then exits 127 (nice's words)
   * instead of failing to spawn.
   */
  niceness?: number;
}

const scopes = new AsyncLocalStorage<StepScope>();

/** Runs `work` with `scope` applying to every {@link exec} it makes, however deep. */
export function runInStepScope<T>(scope: StepScope, work: () => Promise<T>): Promise<T> {
  return scopes.run(scope, work);
}

/** The scope of the calling code, if any. */
export function currentStepScope(): StepScope | undefined {
  return scopes.getStore();
}

/** The call's own signal joined with its scope's: either aborts the process. */
export function effectiveSignal(own: AbortSignal | undefined, scope: StepScope | undefined): AbortSignal | undefined {
  if (own === undefined) return scope?.signal;
  if (scope?.signal === undefined) return own;
  return AbortSignal.any([own, scope.signal]);
}
