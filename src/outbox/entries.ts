/**
 * The outbox's entries in memory: the latest state of each slot, by story. What stays in memory
 * is what a later write needs: a story's pending writes, and, while its reporter lives, what
 * GitHub answered for its check runs and status comment (their ids). Once a story is retired
 * (its reporter is done), each write is let go as soon as GitHub has it.
 */
import { storyKeyOf, type OutboxEntry, type OutboxStory } from "./types.js";

export class OutboxEntries {
  /** By story key, then by slot. */
  private readonly stories = new Map<string, Map<string, OutboxEntry>>();
  private readonly retired = new Set<string>();

  get(story: OutboxStory, slot: string): OutboxEntry | undefined {
    return this.stories.get(storyKeyOf(story))?.get(slot);
  }

  set(entry: OutboxEntry): void {
    const key = storyKeyOf(entry.story);
    let slots = this.stories.get(key);
    if (!slots) this.stories.set(key, (slots = new Map()));
    slots.set(entry.slot, entry);
  }

  delete(story: OutboxStory, slot: string): void {
    const key = storyKeyOf(story);
    const slots = this.stories.get(key);
    if (!slots) return;
    slots.delete(slot);
    if (slots.size === 0) {
      this.stories.delete(key);
      this.retired.delete(key);
    }
  }

  /** Records that GitHub has the entry's latest state: kept while a later write may need its answer, else let go. */
  delivered(entry: OutboxEntry): void {
    // Only a check run's and the status comment's answers (their ids) serve a later write of the slot.
    const needed = entry.write.kind === "check" || entry.write.kind === "status-comment";
    if (needed && !this.retired.has(storyKeyOf(entry.story))) this.set(entry);
    else this.delete(entry.story, entry.slot);
  }

  /** A story's entries, oldest first (the order its writes go out in). */
  ofStory(key: string): OutboxEntry[] {
    return [...(this.stories.get(key)?.values() ?? [])].sort((a, b) => a.id.localeCompare(b.id));
  }

  all(): OutboxEntry[] {
    return [...this.stories.values()].flatMap((slots) => [...slots.values()]);
  }

  /** A new run of the story writes: what GitHub answers for it is kept again. */
  adopt(story: OutboxStory): void {
    this.retired.delete(storyKeyOf(story));
  }

  /** The story's reporter is done: its delivered writes go now, its pending ones once delivered. */
  retire(story: OutboxStory): void {
    const key = storyKeyOf(story);
    const slots = this.stories.get(key);
    if (!slots) return;
    for (const [slot, entry] of slots) if (entry.state === "delivered") slots.delete(slot);
    if (slots.size === 0) this.stories.delete(key);
    else this.retired.add(key);
  }

  /** Every story's reporter is done (they died with an earlier process). */
  retireAll(): void {
    for (const slots of [...this.stories.values()]) this.retire([...slots.values()][0]!.story);
  }

  isRetired(story: OutboxStory): boolean {
    return this.retired.has(storyKeyOf(story));
  }

  get size(): number {
    let size = 0;
    for (const slots of this.stories.values()) size += slots.size;
    return size;
  }
}
