/**
 * The durable outbox: every GitHub write that reports a story is recorded on disk before it is
 * attempted and retried until GitHub accepts it — across restarts, honouring `retry-after` and
 * rate-limit resets, with backoff and a bound. Writes are kept by slot (one check run, the
 * status comment, a label): a newer state replaces a pending one, so after a bad hour GitHub
 * gets the final state, not the whole history. A story's writes go out in order, one at a time.
 */
import type { ProbotOctokit } from "probot";
import { isRunning, selfIdentity } from "../../exec/index.js";
import { errorDetails, type GitHubLog } from "../log.js";
import { deliverEntry } from "./deliver.js";
import { DEFAULT_RETRY_POLICY, retryVerdict, type RetryPolicy } from "./retry.js";
import { newEntryId, OutboxStore } from "./store.js";
import { afterRefusedPush } from "./gate.js";
import { isFinal, storyKeyOf, type OutboxEntry, type OutboxStory, type OutboxWrite, type PushWrite } from "./types.js";

type Octokit = InstanceType<typeof ProbotOctokit>;

export interface OutboxOptions {
  /** `<harnessHome>/outbox`. Absent: kept in memory only (a reporter used outside the App). */
  dir?: string;
  /** An octokit authenticated as the installation, without its own retries (the outbox retries). */
  octokitFor: (installationId: number) => Promise<Octokit>;
  log: GitHubLog;
  policy?: Partial<RetryPolicy>;
  /** The tokens the outbox's octokits were given, so reporters redact them too. */
  secretsSeen?: () => readonly string[];
  /**
   * Pushes a story's work (git, outside this room); throws an error with `retriable: false`
   * when GitHub refused it for good. Without one, a push entry fails and is retried.
   */
  pusher?: (story: OutboxStory, push: PushWrite) => Promise<void>;
  /** How often due retries are looked for (default 500 ms). */
  tickMs?: number;
  now?: () => number;
}

/** What a check run left unfinished by a dead App says once it is closed. */
const INTERRUPTED_OUTPUT = {
  title: "Interrupted",
  summary: "The App stopped (a crash or a restart) while this check ran. Its story is resumed in a new run, whose check runs replace this one.",
};

export class Outbox {
  private readonly entries = new Map<string, OutboxEntry>();
  private readonly passes = new Map<string, Promise<void>>();
  /** Stories whose reporter is done: what is delivered for them from now on leaves memory at once. */
  private readonly retired = new Set<string>();
  private readonly store: OutboxStore | undefined;
  private readonly policy: RetryPolicy;
  private readonly writer = selfIdentity();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(private readonly options: OutboxOptions) {
    this.store = options.dir !== undefined ? new OutboxStore(options.dir) : undefined;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.policy };
  }

  /**
   * Opens the outbox and loads what earlier runs left. A check run that a dead process left
   * unfinished is set to be closed as interrupted, so none stays `in_progress` for good.
   */
  static async open(options: OutboxOptions): Promise<Outbox> {
    const outbox = new Outbox(options);
    if (outbox.store) {
      await outbox.store.init();
      const loaded = await outbox.store.list((file) => options.log.warn({ file }, "outbox: unreadable entry left alone"));
      for (const entry of loaded) {
        const recovered = outbox.recover(entry);
        // A slot moved behind a push by a process that died before removing its older file: the newer one counts.
        const older = outbox.entries.get(slotKey(recovered.story, recovered.slot));
        if (older) await outbox.store.remove(older.id);
        outbox.entries.set(slotKey(recovered.story, recovered.slot), recovered);
        if (recovered !== entry) await outbox.store.write(recovered);
        // The reporter that wrote it died with its process: once delivered, it leaves memory.
        outbox.retired.add(storyKeyOf(recovered.story));
      }
    }
    return outbox;
  }

  /** Starts delivering due retries in the background. */
  start(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => this.tick(), this.options.tickMs ?? 500);
    this.timer.unref();
    this.tick();
  }

  /** Records the state a slot should show (durably, before any attempt). */
  async put(story: OutboxStory, slot: string, write: OutboxWrite): Promise<void> {
    const key = slotKey(story, slot);
    const now = new Date(this.now()).toISOString();
    const previous = this.entries.get(key);
    // A new run of a retired story: its reporter keeps what GitHub answered again.
    this.retired.delete(storyKeyOf(story));
    // Behind a pending push, a slot's new state goes after it: what it says waits for the work to arrive.
    const gate = this.pendingPush(story);
    const behind = previous !== undefined && gate !== undefined && gate.slot !== slot && previous.id < gate.id;
    const entry: OutboxEntry = {
      id: previous && !behind ? previous.id : newEntryId(this.now()),
      story,
      slot,
      write,
      state: "pending",
      attempts: 0,
      ...(previous?.result ? { result: previous.result } : {}),
      // A newer state waits for the same rate limit the older one was told about.
      ...(previous?.state === "pending" && previous.nextAt ? { nextAt: previous.nextAt } : {}),
      writer: { pid: this.writer.pid, startTime: this.writer.startTime },
      createdAt: previous?.createdAt ?? now,
      updatedAt: now,
    };
    this.entries.set(key, entry);
    await this.store?.write(entry);
    if (previous && previous.id !== entry.id) await this.store?.remove(previous.id);
  }

  /**
   * Tries the slot's pending write now, and again after each retry delay, until it is
   * delivered, given up, or tried `attempts` times; resolves with its state (the job's own
   * tries of its push, before the outbox carries on alone).
   */
  async deliverNow(story: OutboxStory, slot: string, attempts: number, signal?: AbortSignal): Promise<OutboxEntry["state"] | undefined> {
    const key = slotKey(story, slot);
    for (;;) {
      await this.flush(story);
      const entry = this.entries.get(key);
      if (!entry || entry.state !== "pending" || entry.attempts >= attempts || signal?.aborted || this.closed) return entry?.state;
      const waitMs = entry.nextAt ? Math.max(0, Date.parse(entry.nextAt) - this.now()) : 0;
      await new Promise((resolve) => setTimeout(resolve, Math.min(waitMs, 60_000)));
    }
  }

  /** True while the slot's latest state waits for GitHub. */
  pending(story: OutboxStory, slot: string): boolean {
    return this.entries.get(slotKey(story, slot))?.state === "pending";
  }

  /** The slot's last refusal, as the outbox recorded it. */
  lastError(story: OutboxStory, slot: string): string | undefined {
    return this.entries.get(slotKey(story, slot))?.lastError;
  }

  /** Forgets a slot's write for good (its failure was reported another way). */
  async discard(story: OutboxStory, slot: string): Promise<void> {
    const key = slotKey(story, slot);
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    await this.store?.remove(entry.id);
  }

  private pendingPush(story: OutboxStory): OutboxEntry | undefined {
    const key = storyKeyOf(story);
    return [...this.entries.values()].find((entry) => entry.write.kind === "push" && entry.state === "pending" && storyKeyOf(entry.story) === key);
  }

  /** One delivery pass over the story's due writes (after a pass already running). */
  async flush(story: OutboxStory): Promise<void> {
    const key = storyKeyOf(story);
    await this.passes.get(key);
    await this.pass(key);
  }

  /** The tokens the outbox authenticated with (a story's output must not carry them to GitHub). */
  secretsSeen(): readonly string[] {
    return this.options.secretsSeen?.() ?? [];
  }

  /** What GitHub answered for a slot (the check run id, the comment id). */
  result(story: OutboxStory, slot: string): OutboxEntry["result"] {
    return this.entries.get(slotKey(story, slot))?.result;
  }

  /** Entries not delivered yet, and those given up, oldest first (for `harness status`). */
  list(): OutboxEntry[] {
    return [...this.entries.values()].filter((entry) => entry.state !== "delivered").sort((a, b) => a.id.localeCompare(b.id));
  }

  /** True while a write of the story waits for GitHub. */
  hasPending(story?: OutboxStory): boolean {
    const key = story ? storyKeyOf(story) : undefined;
    return [...this.entries.values()].some((entry) => entry.state === "pending" && (key === undefined || storyKeyOf(entry.story) === key));
  }

  /**
   * Forgets a story's delivered entries (its reporter is done, so no later write needs what
   * GitHub answered); pending ones stay until they are delivered, then go too. The status
   * comment of a later run is found again by its marker.
   */
  forget(story: OutboxStory): void {
    const key = storyKeyOf(story);
    for (const [slot, entry] of this.entries) if (entry.state === "delivered" && storyKeyOf(entry.story) === key) this.entries.delete(slot);
    if ([...this.entries.values()].some((entry) => storyKeyOf(entry.story) === key)) this.retired.add(key);
  }

  /** How many writes the outbox holds in memory, delivered ones included (what `forget` bounds). */
  held(): number {
    return this.entries.size;
  }

  /** Stops the background deliveries and waits for passes in flight (pending writes stay on disk). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([...this.passes.values()]);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private recover(entry: OutboxEntry): OutboxEntry {
    const write = entry.write;
    if (write.kind !== "check" || write.status === "completed") return entry;
    if (entry.writer.pid === this.writer.pid && entry.writer.startTime === this.writer.startTime) return entry;
    if (isRunning({ pid: entry.writer.pid, startTime: entry.writer.startTime })) return entry;
    const at = new Date(this.now()).toISOString();
    const closed: OutboxWrite = { ...write, status: "completed", conclusion: "cancelled", completedAt: at, output: INTERRUPTED_OUTPUT, actions: [] };
    return { ...entry, write: closed, state: "pending", attempts: 0, updatedAt: at };
  }

  private tick(): void {
    if (this.closed) return;
    const now = this.now();
    const due = new Set<string>();
    for (const entry of this.entries.values()) {
      if (entry.state === "pending" && (!entry.nextAt || Date.parse(entry.nextAt) <= now)) due.add(storyKeyOf(entry.story));
    }
    for (const key of due) if (!this.passes.has(key)) void this.pass(key);
  }

  /** Delivers the story's due writes in order; stops at the first that must wait (order is kept). */
  private pass(key: string): Promise<void> {
    const running = this.passes.get(key);
    if (running) return running;
    const work = (async () => {
      const ordered = [...this.entries.values()].filter((entry) => storyKeyOf(entry.story) === key).sort((a, b) => a.id.localeCompare(b.id));
      // Reports go out in order, each after the one before it; a push does not wait for the
      // reports before it, but every write after a push waits for it.
      let held = false;
      for (const entry of ordered) {
        if (this.closed) return;
        const current = this.entries.get(slotKey(entry.story, entry.slot));
        if (!current || current.state !== "pending") continue;
        const push = current.write.kind === "push";
        if (held && !push) continue;
        const waits = current.nextAt !== undefined && Date.parse(current.nextAt) > this.now();
        if (waits || !(await this.attempt(current))) {
          if (push) return;
          held = true;
        }
      }
    })().finally(() => this.passes.delete(key));
    this.passes.set(key, work);
    return work;
  }

  /** Attempts one entry; false when the story's later writes must wait. */
  private async attempt(entry: OutboxEntry): Promise<boolean> {
    const key = slotKey(entry.story, entry.slot);
    let result: OutboxEntry["result"];
    try {
      if (entry.write.kind === "push") {
        if (!this.options.pusher) throw new Error("this outbox has no pusher");
        await this.options.pusher(entry.story, entry.write);
        result = {};
      } else {
        const octokit = await this.options.octokitFor(entry.story.installationId);
        result = await deliverEntry(octokit, entry);
      }
    } catch (error) {
      return this.failed(key, entry, error);
    }
    const latest = this.entries.get(key) ?? entry;
    const merged = { ...latest.result, ...result };
    // A newer state arrived while this one was on its way: it stays pending, with the id it needs.
    const delivered = latest.write === entry.write;
    const next: OutboxEntry = { ...latest, ...(Object.keys(merged).length > 0 ? { result: merged } : {}), state: delivered ? "delivered" : "pending", updatedAt: new Date(this.now()).toISOString() };
    if (delivered) {
      delete next.nextAt;
      delete next.lastError;
      next.attempts = 0;
    }
    const storyKey = storyKeyOf(entry.story);
    // Only a check run's and the status comment's answers (their ids) serve a later write of the slot.
    const needed = next.write.kind === "check" || next.write.kind === "status-comment";
    if (delivered && (!needed || this.retired.has(storyKey))) {
      this.entries.delete(key);
      if (![...this.entries.values()].some((other) => storyKeyOf(other.story) === storyKey)) this.retired.delete(storyKey);
    } else this.entries.set(key, next);
    // GitHub has it: a disk that refuses the record now must not make it be sent twice.
    const record = delivered && isFinal(next.write) ? this.store?.remove(next.id) : this.store?.write(next);
    await record?.catch((writeError: unknown) => this.options.log.warn({ err: errorDetails(writeError) }, "outbox: could not record a delivered write"));
    return true;
  }

  /** Records a refused attempt: when to try again, or that it is undeliverable; false when the story's later writes must wait. */
  private async failed(key: string, entry: OutboxEntry, error: unknown): Promise<boolean> {
    const latest = this.entries.get(key) ?? entry;
    const attempts = latest.attempts + 1;
    const verdict = retryVerdict(error, attempts, this.policy, this.now());
    const at = new Date(this.now()).toISOString();
    const next: OutboxEntry = verdict.retry
      ? { ...latest, attempts, lastError: verdict.why, nextAt: new Date(this.now() + verdict.afterMs).toISOString(), updatedAt: at }
      : { ...latest, attempts, lastError: verdict.why, state: "undeliverable", updatedAt: at };
    if (!verdict.retry) delete next.nextAt;
    this.entries.set(key, next);
    const details = { story: storyKeyOf(entry.story), slot: entry.slot, attempts, err: errorDetails(error) };
    if (verdict.retry) this.options.log.warn({ ...details, retryInMs: verdict.afterMs }, "outbox: GitHub refused a write; it is retried");
    else this.options.log.error({ ...details, why: verdict.why }, "outbox: a write is undeliverable");
    await this.store?.write(next).catch((writeError: unknown) => this.options.log.warn({ err: errorDetails(writeError) }, "outbox: could not record a failed attempt"));
    if (!verdict.retry && next.write.kind === "push") await this.refusedPush(next, next.write, verdict.why);
    return !verdict.retry;
  }

  /** A push refused for good: the reports that waited for it must not claim the work arrived. */
  private async refusedPush(push: OutboxEntry, write: PushWrite, why: string): Promise<void> {
    const key = storyKeyOf(push.story);
    const followers = [...this.entries.values()].filter((entry) => storyKeyOf(entry.story) === key && entry.state === "pending" && entry.id > push.id);
    const { entries, notices } = afterRefusedPush(write, why, followers, new Date(this.now()).toISOString());
    if (notices.length === 0) return;
    this.options.log.error({ story: key, branch: write.branch, sha: write.sha, why }, "outbox: a story's push was refused after its job ended; its reports say so");
    for (const entry of entries) {
      this.entries.set(slotKey(entry.story, entry.slot), entry);
      await this.store?.write(entry).catch((error: unknown) => this.options.log.warn({ err: errorDetails(error) }, "outbox: could not record a withheld write"));
    }
    await this.discard(push.story, push.slot);
    const retired = this.retired.has(key);
    for (const notice of notices) await this.put(push.story, notice.slot, notice.write).catch((error: unknown) => this.options.log.warn({ err: errorDetails(error) }, "outbox: could not record a notice"));
    // The notices are no new run: the story stays retired.
    if (retired) this.retired.add(key);
  }
}

function slotKey(story: OutboxStory, slot: string): string {
  return `${storyKeyOf(story)}|${slot}`;
}
