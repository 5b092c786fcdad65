import { crc32 } from "node:zlib";
import { decodeChunk, decodeLine, encodeEntry, encodeJobLine } from "../../../src/queue/wal/index.js";

// Moved from wal.test.ts: the records alone, so their mutants run against these tests only.
describe("write-ahead log records", () => {
  it("reads back what it wrote, job records and tombstones", () => {
    const text = encodeJobLine("a-1", JSON.stringify({ x: 1 })) + encodeEntry({ t: "done", id: "a-1" });
    expect(decodeChunk(Buffer.from(text))).toEqual({
      entries: [
        { t: "job", id: "a-1", r: { x: 1 } },
        { t: "done", id: "a-1" },
      ],
      consumed: Buffer.byteLength(text),
      damaged: 0,
    });
  });

  it("leaves a torn tail unread and skips a line whose checksum does not match, never mis-reading it", () => {
    const good = encodeEntry({ t: "done", id: "a-1" });
    const changed = encodeEntry({ t: "done", id: "a-2" }).replace("a-2", "a-3");
    const torn = encodeJobLine("a-4", JSON.stringify({ x: 4 })).slice(0, 20);
    const chunk = Buffer.from(good + changed + torn);
    expect(decodeChunk(chunk)).toEqual({ entries: [{ t: "done", id: "a-1" }], consumed: Buffer.byteLength(good + changed), damaged: 1 });
  });

  it("refuses lines that are not entries, even with a matching checksum", () => {
    const withSum = (json: string): string =>
      encodeJobLine("x", "0")
        .replace(/ .*\n$/, "")
        .slice(0, 0) + `${crc32(json).toString(16).padStart(8, "0")} ${json}`;
    for (const json of [
      '{"t":"job","id":"x"}',
      '{"t":"other","id":"x"}',
      '{"t":"other","id":"x","r":1}',
      '"x"',
      "true",
      '{"t":"done","id":"../x"}',
      '{"t":"done","id":"x/.."}',
      '{"t":"done","id":7}',
      '{"t":"done"}',
      "null",
      "[1",
      "7",
    ]) {
      expect(decodeLine(withSum(json))).toBeUndefined();
    }
    expect(decodeLine(withSum('{"t":"job","id":"x","r":null}'))).toEqual({ t: "job", id: "x", r: null });
    const valid = encodeEntry({ t: "done", id: "x" }).slice(0, -1);
    expect(decodeLine(valid)).toEqual({ t: "done", id: "x" });
    expect(decodeLine(valid.replace(" ", "-"))).toBeUndefined();
  });

  it("pads a checksum to eight hex digits, so a small one still reads back", () => {
    // The first id whose tombstone's checksum has a leading zero digit (found, not guessed: the loop is deterministic).
    let n = 0;
    while (encodeEntry({ t: "done", id: `p-${n}` }).startsWith("0") === false) n += 1;
    const line = encodeEntry({ t: "done", id: `p-${n}` });
    expect(line).toMatch(/^0[0-9a-f]{7} \{/);
    expect(decodeChunk(Buffer.from(line))).toEqual({ entries: [{ t: "done", id: `p-${n}` }], consumed: line.length, damaged: 0 });
  });

  it("keeps a job's record text as given, checksummed as written", () => {
    const line = encodeJobLine("a-1", '{"b":2,"a":1}');
    expect(line).toBe(`${crc32('{"t":"job","id":"a-1","r":{"b":2,"a":1}}').toString(16).padStart(8, "0")} {"t":"job","id":"a-1","r":{"b":2,"a":1}}\n`);
    expect(decodeLine(line.slice(0, -1))).toEqual({ t: "job", id: "a-1", r: { b: 2, a: 1 } });
  });

  it("reads a chunk of several lines, a damaged one between, and counts what it consumed in bytes", () => {
    const first = encodeJobLine("e-1", JSON.stringify({ name: "café" }));
    const damaged = "not a line\n";
    const last = encodeEntry({ t: "done", id: "e-1" });
    const chunk = Buffer.from(first + damaged + last + "partial");
    expect(decodeChunk(chunk)).toEqual({
      entries: [
        { t: "job", id: "e-1", r: { name: "café" } },
        { t: "done", id: "e-1" },
      ],
      consumed: Buffer.byteLength(first + damaged + last),
      damaged: 1,
    });
    expect(decodeChunk(Buffer.from(""))).toEqual({ entries: [], consumed: 0, damaged: 0 });
    expect(decodeChunk(Buffer.from("\n"))).toEqual({ entries: [], consumed: 1, damaged: 1 });
  });
});
