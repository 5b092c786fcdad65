/** The outbox's files: one JSON file per entry under `<harnessHome>/outbox/`, written atomically. */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { schemas } from "../schema/index.js";
import { writeFileAtomic } from "../files/index.js";
import type { OutboxEntry } from "./types.js";

let counter = 0;

/** An entry id that sorts in creation order. */
export function newEntryId(now = Date.now()): string {
  counter = (counter + 1) % 1_000_000;
  return `${String(now).padStart(15, "0")}-${String(counter).padStart(6, "0")}-${randomBytes(4).toString("hex")}`;
}

export class OutboxStore {
  /**
   * Each entry's file operations run in the order they were asked for: a newer state's write
   * that is still under way must not land after the removal of the state that was delivered.
   */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(readonly dir: string) {}

  private inOrder(id: string, operation: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(id) ?? Promise.resolve()).then(operation, operation);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.chains.set(id, settled);
    void settled.then(() => {
      if (this.chains.get(id) === settled) this.chains.delete(id);
    });
    return next;
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  async write(entry: OutboxEntry): Promise<void> {
    schemas().validate("outbox-entry", entry, `outbox/${entry.id}.json`);
    const text = `${JSON.stringify(entry)}\n`;
    await this.inOrder(entry.id, () => writeFileAtomic(join(this.dir, `${entry.id}.json`), text));
  }

  remove(id: string): Promise<void> {
    return this.inOrder(id, () => rm(join(this.dir, `${id}.json`), { force: true }));
  }

  /** Every readable entry, oldest first; an unreadable file is reported through `onUnreadable` and left alone. */
  async list(onUnreadable: (file: string) => void = () => undefined): Promise<OutboxEntry[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((name) => name.endsWith(".json")).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const entries: OutboxEntry[] = [];
    for (const name of names) {
      const text = await readFile(join(this.dir, name), "utf8").catch(() => "");
      const entry = schemas().parseValid<OutboxEntry>("outbox-entry", text);
      if (entry) entries.push(entry);
      else onUnreadable(name);
    }
    return entries;
  }
}
