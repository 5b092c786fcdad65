/** Where a suite gate ran, in words: the console line and the gate's check run say the same. */
import { succeeded } from "../exec/index.js";
import type { HistoryEvent } from "./event-schemas.js";

type GateEvent = Extract<HistoryEvent, { kind: "gate.finished" }>;

/**
 * One sentence saying which suite runs a gate took: the worktree alone (a gate without a clean
 * clone), once in the clean clone, or the clean clone and then the worktree to classify its failure.
 */
export function gateWhere(gate: Pick<GateEvent, "where" | "worktree">): string {
  if (gate.where !== "clean-clone") return "the suite ran in the worktree";
  if (gate.worktree === undefined) return "the suite ran once, in the clean clone";
  const rerun = gate.worktree;
  const ended = succeeded(rerun) ? "it passed" : rerun.timedOut ? "it timed out" : `it failed (exit ${rerun.exitCode ?? "none"})`;
  return `the clean clone failed; the suite was re-run in the worktree: ${ended}`;
}
