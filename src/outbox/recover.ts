/** What the outbox does, at start-up, with an entry that an earlier process left. */
import { isRunning, type ProcessIdentity } from "../exec/index.js";
import { renderInterruptedCheck } from "../github/report/render/index.js";
import type { OutboxEntry, OutboxWrite } from "./types.js";

/**
 * A check run that a dead process left unfinished is to be closed as interrupted, so none stays
 * `in_progress` for good; every other entry, and one whose writer still runs, is kept as it is.
 */
export function recoverEntry(entry: OutboxEntry, self: Pick<ProcessIdentity, "pid" | "startTime">, now: number): OutboxEntry {
  const write = entry.write;
  if (write.kind !== "check" || write.status === "completed") return entry;
  if (entry.writer.pid === self.pid && entry.writer.startTime === self.startTime) return entry;
  if (isRunning({ pid: entry.writer.pid, startTime: entry.writer.startTime })) return entry;
  const at = new Date(now).toISOString();
  const closed: OutboxWrite = {
    ...write,
    status: "completed",
    conclusion: "cancelled",
    completedAt: at,
    output: renderInterruptedCheck(),
    actions: [],
    // Without a recorded id, the dead App's creation may have reached GitHub all the same.
    ...(entry.result?.checkRunId === undefined ? { adoptUnfinished: true } : {}),
  };
  return { ...entry, write: closed, state: "pending", attempts: 0, updatedAt: at };
}
