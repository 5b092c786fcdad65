/** A seat parked until its agents' usage limit resets, as the story and task check runs say it. */
import type { StorySnapshot } from "../../../pipeline/index.js";
import { inlineCode } from "./markdown.js";

/** An ISO time as GitHub readers read it: `2026-12-01 15:00 UTC`. */
export function utcTime(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** The seat waiting for its agents' usage limit to reset, while the story runs. */
export function parkedSeat(snapshot: StorySnapshot): { stage: string; until: string; taskId: string } | undefined {
  if (snapshot.outcome !== "running") return undefined;
  const task = snapshot.tasks.find((candidate) => candidate.parked !== undefined);
  return task?.parked ? { stage: task.parked.stage, until: task.parked.until, taskId: task.id } : undefined;
}

/** The sentence for a parked seat: whose agent waits, until when, and what happens then. */
export function parkedLine(parked: { stage: string; until: string }): string {
  return `⏸️ Stage ${inlineCode(parked.stage)} is parked: every agent it may use is rate limited. It is tried again at ${utcTime(parked.until)}; the wait counts as no attempt.`;
}
