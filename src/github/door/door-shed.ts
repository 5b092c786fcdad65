/**
 * What the webhook door shed: a count, the newest delivery ids, one log line per window at
 * most, and a call when shedding has stopped (a window passed without a shed), for the
 * redelivery sweep. Only the id of a shed delivery whose signature verified (its body is hashed
 * as it drains, after the 503) is kept or logged: an id in a header is anyone's word, and a
 * sender without the webhook secret could otherwise fill the list and push GitHub's out. The
 * sweep never reads these ids: it asks GitHub which deliveries failed.
 */
import type { GitHubLog } from "../index.js";

/**
 * Webhook requests in flight before the door sheds (`HARNESS_MAX_INFLIGHT`). By Little's law,
 * at about 800 deliveries/s, which the App answered on a 2-core machine when this was chosen,
 * 256 in flight is about 0.3 s of queue: far inside GitHub's 10 s, with room for a burst. Not
 * tuned by a measurement of its own (docs/benchmarks.md, `## webhook-latency`).
 */
export const DEFAULT_MAX_INFLIGHT = 256;

/** At most one log line about shed deliveries per this long; a window without a shed ends the episode. */
export const SHED_LOG_EVERY_MS = 1_000;
/** Delivery ids kept (the newest). */
export const SHED_IDS_KEPT = 1_000;
/** Delivery ids named in one log line. */
export const SHED_IDS_LOGGED = 20;

/**
 * A timer the ledger can set; tests bring a hand-driven one. Never cleared: a window's timer is
 * unref'd, so it holds no process open, and a window that closes after the server stopped only
 * asks for a sweep.
 */
export interface ShedClock {
  setTimer(run: () => void, ms: number): void;
}

export const REAL_CLOCK: ShedClock = {
  setTimer(run, ms) {
    setTimeout(run, ms).unref();
  },
};

export interface ShedLedgerOptions {
  log: GitHubLog;
  /** Called once shedding has stopped: a window passed with no delivery shed. */
  onQuiet?: () => void;
  everyMs?: number;
  keepIds?: number;
  clock?: ShedClock;
}

/** Counts what the door shed and says so, at most once a window. */
export class ShedLedger {
  /** Deliveries shed since start. */
  total = 0;
  private readonly ids: string[] = [];
  /** Shed since the last log line, and their ids (up to {@link SHED_IDS_LOGGED}). */
  private pending = 0;
  private pendingIds: string[] = [];
  /** True while a window is open. */
  private windowOpen = false;
  private readonly everyMs: number;
  private readonly keepIds: number;
  private readonly clock: ShedClock;

  constructor(private readonly options: ShedLedgerOptions) {
    this.everyMs = options.everyMs ?? SHED_LOG_EVERY_MS;
    this.keepIds = options.keepIds ?? SHED_IDS_KEPT;
    this.clock = options.clock ?? REAL_CLOCK;
  }

  /** True while a window is open: something was shed in the last one. */
  get shedding(): boolean {
    return this.windowOpen;
  }

  /** The newest delivery ids shed, oldest first. */
  recentIds(): string[] {
    return [...this.ids];
  }

  /** Counts one shed delivery; the first of an episode is logged at once, the rest once a window. */
  record(): void {
    this.total += 1;
    this.pending += 1;
    if (!this.windowOpen) this.say();
  }

  /** Keeps the id of a shed delivery whose signature verified; named in the next log line. */
  verified(deliveryId: string): void {
    this.ids.push(deliveryId);
    // One id in at a time: one out keeps the bound.
    if (this.ids.length > this.keepIds) this.ids.shift();
    if (this.pendingIds.length < SHED_IDS_LOGGED) this.pendingIds.push(deliveryId);
  }

  /** Logs what is pending and opens the next window; a window that closes with nothing pending ends the episode. */
  private say(): void {
    this.options.log.warn({ shed: this.pending, shedTotal: this.total, deliveryIds: this.pendingIds }, "webhook deliveries shed: too many in flight");
    this.pending = 0;
    this.pendingIds = [];
    this.windowOpen = true;
    this.clock.setTimer(() => this.windowClosed(), this.everyMs);
  }

  private windowClosed(): void {
    this.windowOpen = false;
    if (this.pending > 0) {
      this.say();
      return;
    }
    this.options.onQuiet?.();
  }
}
