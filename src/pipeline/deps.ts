import { runSeat, sleepUntil } from "../agents/index.js";
import {
  assertProvisioned,
  createTaskWorktree,
  isProvisioned,
  provisionWorktree,
  removeTaskWorktree,
  runCleanCloneCheck,
  writeCleanCloneResult,
} from "../workspace/index.js";
import { SYSTEM_BOOT_CLOCK, type BootClock } from "./agent-boots.js";

/**
 * The coordinator's collaborators. `runStory` uses the real ones unless a caller passes its
 * own (a benchmark counting launches, a runner wrapping them); there is no module state.
 */
export interface PipelineDeps {
  createTaskWorktree: typeof createTaskWorktree;
  removeTaskWorktree: typeof removeTaskWorktree;
  provisionWorktree: typeof provisionWorktree;
  isProvisioned: typeof isProvisioned;
  assertProvisioned: typeof assertProvisioned;
  runCleanCloneCheck: typeof runCleanCloneCheck;
  writeCleanCloneResult: typeof writeCleanCloneResult;
  runSeat: typeof runSeat;
  /** Waits for a parked seat's reset time (tests pass one that moves their clock instead). */
  sleepUntil: typeof sleepUntil;
  /** How a task tells its agents' start (agent-boots.ts): the CPU reader and the start's bounds. */
  bootClock: BootClock;
}

/** The real collaborators. */
export function defaultDeps(): PipelineDeps {
  return {
    createTaskWorktree,
    removeTaskWorktree,
    provisionWorktree,
    isProvisioned,
    assertProvisioned,
    runCleanCloneCheck,
    writeCleanCloneResult,
    runSeat,
    sleepUntil,
    bootClock: SYSTEM_BOOT_CLOCK,
  };
}
