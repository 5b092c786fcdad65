/**
 * Nothing shed is lost: GitHub does not retry a failed webhook delivery, so the App asks for it.
 * A sweep lists the App's deliveries (newest first, `GET /app/hook/deliveries`, cursor pages)
 * back to {@link REDELIVER_WITHIN_MS}, and for each event (GUID) with no successful (2xx)
 * delivery asks GitHub once to redeliver its newest failed one
 * (`POST /app/hook/deliveries/{id}/attempts`). Both calls are the App's own (its JWT). Every
 * answer of GitHub may fail: the sweep logs it and the next sweep tries again. A delivery that
 * arrives twice is one job: the queue deduplicates by delivery id.
 */
import type { GitHubLog } from "../index.js";
import { errorDetails } from "../index.js";
import type { AppOctokit } from "../story/index.js";

/** Deliveries older than this are not redelivered (GitHub keeps deliveries for a few days). */
export const REDELIVER_WITHIN_MS = 24 * 60 * 60 * 1000;
/** Pages of 100 deliveries read in one sweep at most. */
export const SWEEP_MAX_PAGES = 50;
/** Failed delivery ids remembered as asked for (the newest). */
export const ASKED_KEPT = 10_000;

/** A delivery as the list gives it (the fields the sweep reads). */
export interface HookDelivery {
  id: number;
  guid: string;
  delivered_at: string;
  status_code: number;
}

export interface SweepResult {
  /** Deliveries read. */
  listed: number;
  /** Redeliveries asked for and accepted by GitHub. */
  asked: number;
  /** Asks GitHub refused or did not answer (tried again at the next sweep). */
  failed: number;
  /** False when the listing itself failed. */
  complete: boolean;
}

/** What the sweeps are doing and last did (the status page shows it). */
export interface SweepState {
  /** A sweep is running. */
  running: boolean;
  /** A sweep was asked for while one ran: it runs after it. */
  queued: boolean;
  /** The last sweep that ended, and when (ISO-8601). */
  last?: SweepResult & { endedAt: string };
}

export interface RedeliveryOptions {
  /** The App's JWT-authenticated octokit. */
  appOctokit: () => Promise<AppOctokit>;
  log: GitHubLog;
  withinMs?: number;
  maxPages?: number;
  now?: () => number;
  /** Failed delivery ids remembered as asked for ({@link ASKED_KEPT}). */
  keepAsked?: number;
}

const ok = (status: number): boolean => status >= 200 && status < 300;
/**
 * Failures worth a second delivery: no answer at all (0: timed out or unreachable), 408, 429
 * and 5xx (the door's 503 when it sheds, a handler's failure). Another answer (400 for a bad
 * signature, 413, 415) is the App's deliberate refusal of that body, and would be given again.
 */
const retryable = (status: number): boolean => status === 0 || status === 408 || status === 429 || status >= 500;

/** The `cursor` of a `Link` header's `rel="next"`; undefined on the last page. */
export function nextCursor(link: string | undefined): string | undefined {
  const next = link?.split(",").find((part) => /;\s*rel="next"/.test(part));
  const url = next ? /<([^>]+)>/.exec(next)?.[1] : undefined;
  return url ? (new URL(url).searchParams.get("cursor") ?? undefined) : undefined;
}

/**
 * The failed deliveries to redeliver, newest first: for each GUID without a 2xx delivery, its
 * newest failed delivery when that failure is {@link retryable}, unless it was asked for
 * already. Pure.
 */
export function toRedeliver(deliveries: readonly HookDelivery[], asked: ReadonlySet<number>): HookDelivery[] {
  const settled = new Set(deliveries.filter((delivery) => ok(delivery.status_code)).map((delivery) => delivery.guid));
  const newest = new Map<string, HookDelivery>();
  for (const delivery of deliveries) {
    if (settled.has(delivery.guid)) continue;
    const seen = newest.get(delivery.guid);
    // Stryker disable next-line EqualityOperator: an equal id is the same delivery (listed twice when pages shift): either copy will do
    if (!seen || Date.parse(delivery.delivered_at) > Date.parse(seen.delivered_at) || (delivery.delivered_at === seen.delivered_at && delivery.id > seen.id))
      newest.set(delivery.guid, delivery);
  }
  return [...newest.values()].filter((delivery) => retryable(delivery.status_code) && !asked.has(delivery.id));
}

/** Asks GitHub to redeliver what failed; one sweep at a time, a sweep asked for meanwhile runs after it. */
export class RedeliverySweeper {
  private readonly asked = new Set<number>();
  private running: Promise<SweepResult> | undefined;
  private again: Promise<SweepResult> | undefined;
  private last: SweepState["last"];

  constructor(private readonly options: RedeliveryOptions) {}

  /** Whether a sweep runs or waits to run, and what the last one did. */
  state(): SweepState {
    return { running: this.running !== undefined, queued: this.again !== undefined, ...(this.last ? { last: { ...this.last } } : {}) };
  }

  /** Runs a sweep (or, while one runs, one more after it). Never rejects. */
  sweep(): Promise<SweepResult> {
    if (!this.running) {
      this.running = this.once()
        .then((result) => {
          this.last = { ...result, endedAt: new Date(this.now()).toISOString() };
          return result;
        })
        .finally(() => {
          this.running = undefined;
        });
      return this.running;
    }
    this.again ??= this.running.then(() => {
      this.again = undefined;
      return this.sweep();
    });
    return this.again;
  }

  private async once(): Promise<SweepResult> {
    const { log } = this.options;
    const result: SweepResult = { listed: 0, asked: 0, failed: 0, complete: true };
    let octokit: AppOctokit;
    let deliveries: HookDelivery[];
    try {
      octokit = await this.options.appOctokit();
      deliveries = await this.list(octokit);
    } catch (error) {
      log.warn({ err: errorDetails(error) }, "webhook redelivery: the deliveries could not be listed; the next sweep tries again");
      return { ...result, complete: false };
    }
    result.listed = deliveries.length;
    for (const delivery of toRedeliver(deliveries, this.asked)) {
      try {
        await octokit.rest.apps.redeliverWebhookDelivery({ delivery_id: delivery.id });
        this.remember(delivery.id);
        result.asked += 1;
      } catch (error) {
        result.failed += 1;
        log.warn(
          { deliveryId: delivery.guid, hookDeliveryId: delivery.id, err: errorDetails(error) },
          "webhook redelivery: GitHub did not take the request; the next sweep tries again",
        );
      }
    }
    if (result.asked > 0 || result.failed > 0) log.info({ ...result }, "webhook redelivery: failed deliveries asked for again");
    return result;
  }

  /** The deliveries newer than the bound, newest first, page by page. */
  private async list(octokit: AppOctokit): Promise<HookDelivery[]> {
    const since = this.now() - (this.options.withinMs ?? REDELIVER_WITHIN_MS);
    const found: HookDelivery[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < (this.options.maxPages ?? SWEEP_MAX_PAGES); page += 1) {
      const response = await octokit.rest.apps.listWebhookDeliveries({ per_page: 100, ...(cursor ? { cursor } : {}) });
      for (const delivery of response.data) {
        if (Date.parse(delivery.delivered_at) < since) return found;
        found.push(delivery);
      }
      cursor = nextCursor(response.headers.link);
      if (!cursor) break;
    }
    return found;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private remember(id: number): void {
    this.asked.add(id);
    // One id in at a time: forgetting the oldest (a Set iterates in insertion order) keeps the bound.
    if (this.asked.size > (this.options.keepAsked ?? ASKED_KEPT)) this.asked.delete(this.asked.values().next().value as number);
  }
}
