import { appendFileSync } from "node:fs";
import { emptySnapshot, reduceSnapshot, type HistoryEvent, type Reporter, type StorySnapshot } from "./events.js";
import type { Journal } from "./journal.js";

/** An event as the coordinator raises it; the sink stamps the time. */
export type EventInput = HistoryEvent extends infer E ? (E extends HistoryEvent ? Omit<E, "at"> : never) : never;

/**
 * Every event goes to the journal first (the record of truth), then to the snapshot, then to
 * the reporter. A reporter that fails is written to `reporterLog` and otherwise ignored:
 * reporting must never stop a story.
 */
export class EventSink {
  private current: StorySnapshot = emptySnapshot();

  constructor(
    private readonly journal: Journal,
    private readonly reporter: Reporter,
    private readonly reporterLog: string,
    private readonly clock: () => Date,
  ) {}

  get snapshot(): StorySnapshot {
    return this.current;
  }

  async emit(input: EventInput): Promise<HistoryEvent> {
    const event = { ...input, at: this.clock().toISOString() } as HistoryEvent;
    this.journal.append(event);
    this.current = reduceSnapshot(this.current, event);
    try {
      await this.reporter.onEvent(event, this.current);
    } catch (error) {
      const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
      appendFileSync(this.reporterLog, `${event.at} reporter failed on ${event.kind}: ${text}\n`);
    }
    return event;
  }
}
