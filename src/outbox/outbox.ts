/**
 * The durable outbox: every GitHub write that reports a story is recorded on disk before it is
 * attempted and retried until GitHub accepts it — across restarts, honouring `retry-after` and
 * rate-limit resets, with backoff and a bound. Writes are kept by slot (one check run, the
 * status comment, a label): a newer state replaces a pending one, so after a bad hour GitHub
 * gets the final state, not the whole history. A story's writes go out in order, one at a time.
 */
import { selfIdentity } from "../exec/index.js";
import { errorDetails } from "../github/index.js";
import type { OutboxOptions } from "./options.js";
import { DEFAULT_RETRY_POLICY, retryVerdict, type RetryPolicy } from "./retry.js";
import { newEntryId, OutboxStore } from "./store.js";
import { OutboxEntries } from "./entries.js";
import { afterRefusedPush } from "./gate.js";
import { recoverEntry } from "./recover.js";
import { afterDelivery, afterFailure } from "./transitions.js";
import { isFinal, PUSH_SLOT, storyKeyOf, type OutboxEntry, type OutboxStory, type OutboxWrite, type PushWrite } from "./types.js";

export class Outbox {
  private readonly entries = new OutboxEntries();
  private readonly passes = new Map<string, Promise<void>>();
  private readonly store: OutboxStore | undefined;
  private readonly policy: RetryPolicy;
  private readonly writer = selfIdentity();
  /** Ids of the writes a `deliverNow` waits on, and those of them a refused push let go of (their slot is then empty, as a delivered one's). */
  private readonly watched = new Map<string, "watching" | "let-go">();
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
        const recovered = recoverEntry(entry, outbox.writer, outbox.now());
        // A slot moved behind a push by a process that died before removing its older file: the newer one counts.
        const older = outbox.entries.get(recovered.story, recovered.slot);
        if (older) await outbox.store.remove(older.id);
        outbox.entries.set(recovered);
        if (recovered !== entry) await outbox.store.write(recovered);
      }
      // The reporters that wrote them died with their process: what is delivered from now on leaves memory.
      outbox.entries.retireAll();
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

  /**
   * Records the state a slot should show (durably, before any attempt). A slot keeps its place in
   * the story's order; with `last`, its new state goes after every write recorded so far. Behind a
   * pending push a new state goes after the push, unless `beforePush` says it does not depend on
   * the work arriving (it says that the push waits): then it keeps its place and goes out now.
   */
  async put(story: OutboxStory, slot: string, write: OutboxWrite, options: { last?: boolean; beforePush?: boolean } = {}): Promise<void> {
    const now = new Date(this.now()).toISOString();
    const previous = this.entries.get(story, slot);
    // A new run of a retired story: what GitHub answers for it is kept again.
    this.entries.adopt(story);
    // Behind a pending push, a slot's new state goes after it: what it says waits for the work to arrive.
    const gate = this.pendingPush(story);
    const behindPush = gate !== undefined && gate.slot !== slot && previous !== undefined && previous.id < gate.id && options.beforePush !== true;
    const behind = previous !== undefined && (options.last === true || behindPush);
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
    this.entries.set(entry);
    await this.store?.write(entry);
    if (previous && previous.id !== entry.id) await this.store?.remove(previous.id);
  }

  /**
   * Tries the slot's pending write now, and again after each retry delay, until it is
   * delivered, given up, or tried `attempts` times; resolves with its state (the job's own
   * tries of its push, before the outbox carries on alone). A push refused for good while
   * later writes of its story waited is let go of (the story is told instead, see
   * `refusedPush`): that leaves its slot empty like a delivered write's, and is answered
   * `undeliverable`, never `delivered`.
   */
  async deliverNow(story: OutboxStory, slot: string, attempts: number, signal?: AbortSignal): Promise<OutboxEntry["state"] | undefined> {
    const id = this.entries.get(story, slot)?.id;
    if (id === undefined) {
      await this.flush(story);
      return this.entries.get(story, slot)?.state;
    }
    this.watched.set(id, "watching");
    try {
      for (;;) {
        await this.flush(story);
        const entry = this.entries.get(story, slot);
        // A slot emptied under the call: delivered (and forgotten), or a refused push let go of once its followers were told.
        if (!entry) return this.watched.get(id) === "let-go" ? "undeliverable" : "delivered";
        if (entry.state !== "pending" || entry.attempts >= attempts || signal?.aborted || this.closed) return entry.state;
        const waitMs = entry.nextAt ? Math.max(0, Date.parse(entry.nextAt) - this.now()) : 0;
        await new Promise((resolve) => setTimeout(resolve, Math.min(waitMs, 60_000)));
      }
    } finally {
      this.watched.delete(id);
    }
  }

  /** True while the slot's latest state waits for GitHub. */
  pending(story: OutboxStory, slot: string): boolean {
    return this.entries.get(story, slot)?.state === "pending";
  }

  /** The slot's last refusal, as the outbox recorded it. */
  lastError(story: OutboxStory, slot: string): string | undefined {
    return this.entries.get(story, slot)?.lastError;
  }

  /** Forgets a slot's write for good (its failure was reported another way). */
  async discard(story: OutboxStory, slot: string): Promise<void> {
    const entry = this.entries.get(story, slot);
    if (!entry) return;
    this.entries.delete(story, slot);
    await this.store?.remove(entry.id);
  }

  private pendingPush(story: OutboxStory): OutboxEntry | undefined {
    const push = this.entries.get(story, PUSH_SLOT);
    return push?.state === "pending" ? push : undefined;
  }

  /** True when entries are kept on disk (the App's outbox): what is recorded is delivered even after a restart. */
  get durable(): boolean {
    return this.store !== undefined;
  }

  /**
   * Starts a delivery pass over the story's due writes without waiting for it (what a job that
   * handed its reports off asks): the writes are already on disk, and the background retries and
   * a restart carry on with any GitHub does not take now.
   */
  deliverSoon(story: OutboxStory): void {
    // A closed outbox's pass returns at once. A pass catches its own failures; this catch only keeps a defect from going unhandled.
    // Stryker disable next-line ArrowFunction,ObjectLiteral,StringLiteral: no pass rejects (each attempt and record catches its errors).
    this.flush(story).catch((error: unknown) =>
      this.options.log.warn({ err: errorDetails(error), story: storyKeyOf(story) }, "outbox: a delivery pass failed; the background retries carry on"),
    );
  }

  /** One delivery pass over the story's due writes (after a pass already running). */
  flush(story: OutboxStory): Promise<void> {
    return this.flushKey(storyKeyOf(story));
  }

  private async flushKey(key: string): Promise<void> {
    await this.passes.get(key);
    await this.pass(key);
  }

  /**
   * A stopping App's last pass: delivers every story's writes due now (the end reports its last
   * jobs handed off) and waits for them, at most `withinMs`; what is not delivered stays on disk
   * for the next start.
   */
  async drain(withinMs: number): Promise<void> {
    // Closed: each pass returns at once.
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, withinMs);
    });
    await Promise.race([Promise.allSettled([...this.dueStories()].map((key) => this.flushKey(key))), bound]);
    clearTimeout(timer);
  }

  /** The tokens the outbox authenticated with (a story's output must not carry them to GitHub). */
  secretsSeen(): readonly string[] {
    return this.options.secretsSeen?.() ?? [];
  }

  /** What GitHub answered for a slot (the check run id, the comment id). */
  result(story: OutboxStory, slot: string): OutboxEntry["result"] {
    return this.entries.get(story, slot)?.result;
  }

  /** Entries not delivered yet, and those given up, oldest first (for `harness status`). */
  list(): OutboxEntry[] {
    return this.entries
      .all()
      .filter((entry) => entry.state !== "delivered")
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /** True while a write of the story waits for GitHub. */
  hasPending(story?: OutboxStory): boolean {
    const entries = story ? this.entries.ofStory(storyKeyOf(story)) : this.entries.all();
    return entries.some((entry) => entry.state === "pending");
  }

  /**
   * Forgets a story's delivered entries (its reporter is done, so no later write needs what
   * GitHub answered); pending ones stay until they are delivered, then go too. The status
   * comment of a later run is found again by its marker.
   */
  forget(story: OutboxStory): void {
    this.entries.retire(story);
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

  private tick(): void {
    if (this.closed) return;
    for (const key of this.dueStories()) if (!this.passes.has(key)) void this.pass(key);
  }

  /** The stories with a write due now. */
  private dueStories(): Set<string> {
    const now = this.now();
    const due = new Set<string>();
    for (const entry of this.entries.all()) {
      if (entry.state === "pending" && (!entry.nextAt || Date.parse(entry.nextAt) <= now)) due.add(storyKeyOf(entry.story));
    }
    return due;
  }

  /** Delivers the story's due writes in order; stops at the first that must wait (order is kept). */
  private pass(key: string): Promise<void> {
    const running = this.passes.get(key);
    if (running) return running;
    const work = (async () => {
      const ordered = this.entries.ofStory(key);
      // Reports go out in order, each after the one before it; a push does not wait for the
      // reports before it, but every write after a push waits for it.
      let held = false;
      for (const entry of ordered) {
        if (this.closed) return;
        const current = this.entries.get(entry.story, entry.slot);
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
    let result: OutboxEntry["result"];
    try {
      if (entry.write.kind === "push") {
        if (!this.options.pusher) throw new Error("this outbox has no pusher");
        await this.options.pusher(entry.story, entry.write);
        result = {};
      } else {
        result = await this.options.deliver(entry);
      }
    } catch (error) {
      return this.failed(entry, error);
    }
    const next = afterDelivery(this.entries.get(entry.story, entry.slot) ?? entry, entry, result, this.now());
    const delivered = next.state === "delivered";
    if (delivered) this.entries.delivered(next);
    else this.entries.set(next);
    // GitHub has it: a disk that refuses the record now must not make it be sent twice.
    const record = delivered && isFinal(next.write) ? this.store?.remove(next.id) : this.store?.write(next);
    await record?.catch((writeError: unknown) => this.options.log.warn({ err: errorDetails(writeError) }, "outbox: could not record a delivered write"));
    return true;
  }

  /** Records a refused attempt: when to try again, or that it is undeliverable; false when the story's later writes must wait. */
  private async failed(entry: OutboxEntry, error: unknown): Promise<boolean> {
    const latest = this.entries.get(entry.story, entry.slot) ?? entry;
    const attempts = latest.attempts + 1;
    const verdict = retryVerdict(error, attempts, this.policy, this.now());
    const next = afterFailure(latest, verdict, attempts, this.now());
    this.entries.set(next);
    const details = { story: storyKeyOf(entry.story), slot: entry.slot, attempts, err: errorDetails(error) };
    if (verdict.retry) this.options.log.warn({ ...details, retryInMs: verdict.afterMs }, "outbox: GitHub refused a write; it is retried");
    else this.options.log.error({ ...details, why: verdict.why }, "outbox: a write is undeliverable");
    await this.store
      ?.write(next)
      .catch((writeError: unknown) => this.options.log.warn({ err: errorDetails(writeError) }, "outbox: could not record a failed attempt"));
    if (!verdict.retry && next.write.kind === "push") await this.refusedPush(next, next.write, verdict.why);
    return !verdict.retry;
  }

  /** A push refused for good: the reports that waited for it must not claim the work arrived. */
  private async refusedPush(push: OutboxEntry, write: PushWrite, why: string): Promise<void> {
    const key = storyKeyOf(push.story);
    const followers = this.entries.ofStory(key).filter((entry) => entry.state === "pending" && entry.id > push.id);
    const { entries, notices } = afterRefusedPush(write, why, followers, new Date(this.now()).toISOString());
    if (notices.length === 0) return;
    this.options.log.error(
      { story: key, branch: write.branch, sha: write.sha, why },
      "outbox: a story's push was refused after its job ended; its reports say so",
    );
    for (const entry of entries) {
      this.entries.set(entry);
      await this.store
        ?.write(entry)
        .catch((error: unknown) => this.options.log.warn({ err: errorDetails(error) }, "outbox: could not record a withheld write"));
    }
    if (this.watched.has(push.id)) this.watched.set(push.id, "let-go");
    await this.discard(push.story, push.slot);
    const retired = this.entries.isRetired(push.story);
    for (const notice of notices)
      await this.put(push.story, notice.slot, notice.write).catch((error: unknown) =>
        this.options.log.warn({ err: errorDetails(error) }, "outbox: could not record a notice"),
      );
    // The notices are no new run: the story stays retired.
    if (retired) this.entries.retire(push.story);
  }
}
