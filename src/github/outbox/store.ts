/** The outbox's files: one JSON file per entry under `<harnessHome>/outbox/`, written atomically. */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { schemas } from "../../schema/index.js";
import { writeFileAtomic } from "../../files/index.js";
import type { OutboxEntry } from "./types.js";

let counter = 0;

/** An entry id that sorts in creation order. */
export function newEntryId(now = Date.now()): string {
  counter = (counter + 1) % 1_000_000;
  return `${String(now).padStart(15, "0")}-${String(counter).padStart(6, "0")}-${randomBytes(4).toString("hex")}`;
}

export class OutboxStore {
  constructor(readonly dir: string) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  async write(entry: OutboxEntry): Promise<void> {
    schemas().validate("outbox-entry", entry, `outbox/${entry.id}.json`);
    await writeFileAtomic(join(this.dir, `${entry.id}.json`), `${JSON.stringify(entry)}\n`);
  }

  async remove(id: string): Promise<void> {
    await rm(join(this.dir, `${id}.json`), { force: true });
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
