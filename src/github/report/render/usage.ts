/** The usage table: what each seat's agents spent (turns, tokens, agent time), read from their transcripts. */
import type { SeatUsageTotal, TaskSnapshot } from "../../../pipeline/index.js";
import { formatDuration, tableCell } from "./markdown.js";

const count = (value: number): string => value.toLocaleString("en-US");

/** One row per seat of `task` that spent anything (none: no lines), with a total row when there are several. */
export function usageTable(task: TaskSnapshot | undefined): string[] {
  const seats = Object.entries(task?.usage ?? {});
  if (seats.length === 0) return [];
  const row = (name: string, usage: SeatUsageTotal): string =>
    `| ${name} | ${usage.launches} | ${count(usage.turns)} | ${count(usage.inputTokens)} | ${count(usage.outputTokens)} | ${formatDuration(usage.durationMs) || "–"} |`;
  const rows = seats.map(([seat, usage]) => row(tableCell(seat), usage));
  if (seats.length > 1) {
    const total = seats.reduce(
      (sum, [, usage]) => ({
        launches: sum.launches + usage.launches,
        turns: sum.turns + usage.turns,
        inputTokens: sum.inputTokens + usage.inputTokens,
        outputTokens: sum.outputTokens + usage.outputTokens,
        durationMs: sum.durationMs + usage.durationMs,
      }),
      { launches: 0, turns: 0, inputTokens: 0, outputTokens: 0, durationMs: 0 },
    );
    rows.push(row("**total**", total));
  }
  const story = task?.storySpent;
  // What the budget is held to: every run of the story, not this one's table alone.
  const acrossRuns =
    story !== undefined && story.runs > 1
      ? ["", `Across the story's ${story.runs} runs its agents spent ${count(story.tokens)} tokens and ${formatDuration(story.agentMs) || "–"} of agent time.`]
      : [];
  return [
    "",
    "#### Agent usage",
    "",
    "| Seat | Launches | Turns | Input tokens | Output tokens | Agent time |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
    ...acrossRuns,
  ];
}
