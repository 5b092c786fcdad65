/** The outbox's files: ids that sort in creation order, validated atomic writes, operations in the order asked, a listing that survives bad files. */
import { afterAll, describe, expect, it } from "@jest/globals";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { newEntryId, OutboxStore } from "../../src/outbox/store.js";
import type { OutboxEntry } from "../../src/outbox/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

const AT = "2026-12-05T10:00:00.000Z";

function entry(id: string, body = "hello"): OutboxEntry {
  return {
    id,
    story: { installationId: 1, owner: "octo", repo: "demo", issueNumber: 7 },
    slot: "comment:hello",
    write: { kind: "comment", issueNumber: 7, body },
    state: "pending",
    attempts: 0,
    writer: { pid: 1, startTime: "1" },
    createdAt: AT,
    updatedAt: AT,
  };
}

async function openStore(): Promise<OutboxStore> {
  const store = new OutboxStore(join(makeTempDir("harness-outbox-store-"), "outbox"));
  await store.init();
  return store;
}

describe("newEntryId", () => {
  it("is the time, a counter and a random part, and sorts in creation order within a millisecond and across them", () => {
    const ids = [newEntryId(5), newEntryId(5), newEntryId(5), newEntryId(6), newEntryId(1_000)];
    for (const id of ids) expect(id).toMatch(/^\d{15}-\d{6}-[0-9a-f]{8}$/);
    expect(ids[0]?.startsWith("000000000000005-")).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("OutboxStore", () => {
  it("makes its folder, and writes each entry as one JSON file named by its id", async () => {
    const store = await openStore();
    expect(existsSync(store.dir)).toBe(true);
    await store.init(); // again: an existing folder is fine
    await store.write(entry("000000000000002-000001-aaaaaaaa"));
    expect(readdirSync(store.dir)).toEqual(["000000000000002-000001-aaaaaaaa.json"]);
    expect(JSON.parse(readFileSync(join(store.dir, "000000000000002-000001-aaaaaaaa.json"), "utf8"))).toEqual(entry("000000000000002-000001-aaaaaaaa"));
  });

  it("refuses to write an entry its schema rejects, naming the file, and leaves nothing on disk", async () => {
    const store = await openStore();
    const bad = { ...entry("000000000000003-000001-bbbbbbbb"), state: "lost" } as unknown as OutboxEntry;
    await expect(store.write(bad)).rejects.toThrow(/outbox\/000000000000003-000001-bbbbbbbb\.json/);
    expect(readdirSync(store.dir)).toEqual([]);
  });

  it("lists its entries oldest first, and reports an unreadable file without reading past or removing it", async () => {
    const store = await openStore();
    await store.write(entry("000000000000009-000001-cccccccc", "later"));
    await store.write(entry("000000000000001-000001-dddddddd", "earlier"));
    writeFileSync(join(store.dir, "000000000000005-000001-eeeeeeee.json"), "{ not json");
    writeFileSync(join(store.dir, "000000000000006-000001-ffffffff.json"), JSON.stringify({ ...entry("x"), state: "lost" }));
    writeFileSync(join(store.dir, "notes.txt"), "not an entry");
    mkdirSync(join(store.dir, "000000000000007-000001-00000000.json"));
    const unreadable: string[] = [];
    const listed = await store.list((file) => unreadable.push(file));
    expect(listed.map((item) => item.write)).toEqual([entry("a", "earlier").write, entry("a", "later").write]);
    expect(unreadable).toEqual(["000000000000005-000001-eeeeeeee.json", "000000000000006-000001-ffffffff.json", "000000000000007-000001-00000000.json"]);
    expect(readdirSync(store.dir)).toHaveLength(6);
    // Without a listener, the same entries.
    expect(await store.list()).toHaveLength(2);
  });

  it("lists nothing when its folder is gone, and says so when the folder cannot be read", async () => {
    const store = await openStore();
    rmSync(store.dir, { recursive: true });
    expect(await store.list()).toEqual([]);
    writeFileSync(store.dir, "a file where the folder was");
    await expect(store.list()).rejects.toMatchObject({ code: "ENOTDIR" });
  });

  it("runs an entry's operations in the order they were asked for, even unawaited", async () => {
    const store = await openStore();
    const id = "000000000000004-000001-12345678";
    // A write still under way, then the removal of what it wrote: nothing is left.
    await Promise.all([store.write(entry(id, "one")), store.remove(id)]);
    expect(existsSync(join(store.dir, `${id}.json`))).toBe(false);
    // A removal, then a newer state: the newer state is left.
    await Promise.all([store.remove(id), store.write(entry(id, "two")), store.write(entry(id, "three"))]);
    expect((JSON.parse(readFileSync(join(store.dir, `${id}.json`), "utf8")) as OutboxEntry).write).toMatchObject({ body: "three" });
    await store.remove(id);
    await store.remove(id); // removing what is gone is fine
    expect(readdirSync(store.dir)).toEqual([]);
  });

  it("carries on with an entry's later operations after one failed", async () => {
    const store = await openStore();
    const id = "000000000000008-000001-87654321";
    rmSync(store.dir, { recursive: true });
    await expect(store.write(entry(id, "lost"))).rejects.toThrow();
    await store.init();
    await store.write(entry(id, "kept"));
    expect((await store.list()).map((item) => item.write)).toEqual([entry(id, "kept").write]);
  });
});
