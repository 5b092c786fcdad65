/**
 * Observes what happens to the entries of one folder while some work runs, through the kernel's
 * own notifications (inotify behind `fs.watch`): nothing is mocked, and the order of events is
 * the order the kernel saw them. Used to prove a file is written atomically: its final name only
 * ever appears by a rename, and no write ever lands on it.
 */
import { rmSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

/** One notification: `rename` (an entry appeared, moved or went), `change` (content or attributes). */
export interface FolderEvent {
  event: "rename" | "change";
  name: string;
}

/**
 * Runs `work` while watching `dir`, then waits until the kernel's events up to the end of
 * `work` are delivered (a sentinel file written afterwards closes the list: inotify keeps the
 * order) and returns them; the sentinel is removed again. Fails after `deadlineMs` if the sentinel's event never arrives.
 */
export async function folderEvents(dir: string, work: () => unknown, deadlineMs = 20_000): Promise<FolderEvent[]> {
  const sentinel = `.sentinel-${randomBytes(4).toString("hex")}`;
  const events: FolderEvent[] = [];
  let closed: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    closed = resolve;
  });
  const watcher = watch(dir, { persistent: false }, (event, name) => {
    if (name === null) return;
    if (name.toString() === sentinel) return closed();
    events.push({ event: event === "change" ? "change" : "rename", name: name.toString() });
  });
  try {
    await work();
    writeFileSync(join(dir, sentinel), "");
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no notification for ${sentinel} within ${deadlineMs} ms`)), deadlineMs);
    });
    await Promise.race([done, late]).finally(() => clearTimeout(timer));
  } finally {
    watcher.close();
    rmSync(join(dir, sentinel), { force: true });
  }
  return events;
}

/**
 * True when `name` appeared among `events` only by a rename onto it: there is a `rename` event
 * for it and no `change` (no write, no truncation) ever landed on it.
 */
export function appearedOnlyByRename(events: readonly FolderEvent[], name: string): boolean {
  return events.some((e) => e.name === name && e.event === "rename") && !events.some((e) => e.name === name && e.event === "change");
}

/** The names a write landed on (`change` events), in order, each once. */
export function writtenNames(events: readonly FolderEvent[]): string[] {
  return [...new Set(events.filter((e) => e.event === "change").map((e) => e.name))];
}
