import { keepLastBytes, TailBuffer, tailText } from "../../src/exec/index.js";

describe("tailText", () => {
  it("keeps the last N lines and ignores a trailing newline", () => {
    const text = Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\n") + "\n";
    const tail = tailText(Buffer.from(text), 3, 1024);
    expect(tail).toBe("line 47\nline 48\nline 49");
  });

  it("keeps at most maxBytes and never starts inside a multibyte character", () => {
    // "é" is 2 bytes, "€" is 3 bytes, "😀" is 4 bytes: every cut point lands somewhere.
    const text = "é€😀".repeat(1000);
    for (let maxBytes = 1; maxBytes <= 12; maxBytes += 1) {
      const tail = tailText(Buffer.from(text), 20, maxBytes);
      expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(maxBytes);
      expect(tail).not.toContain("\uFFFD");
      expect(text.endsWith(tail)).toBe(true);
    }
  });

  it("drops a last character that was cut off mid-write", () => {
    const bytes = Buffer.concat([Buffer.from("ok\nhalf "), Buffer.from("😀").subarray(0, 2)]);
    expect(tailText(bytes, 20, 1024)).toBe("ok\nhalf ");
  });

  it("returns nothing for a zero bound", () => {
    expect(tailText(Buffer.from("a\nb"), 0, 100)).toBe("");
  });
});

describe("TailBuffer", () => {
  it("stays within its byte bound however much passes through", () => {
    const tail = new TailBuffer(1024);
    const line = Buffer.from("x".repeat(99) + "\n");
    for (let i = 0; i < 100_000; i += 1) tail.push(line);
    expect(tail.bytesSeen).toBe(100 * 100_000);
    const text = tail.text(1000);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1024);
    // The last 1024 bytes: 23 bytes of an earlier line, then 10 whole lines (the final newline is not shown).
    const lines = text.split("\n");
    expect(lines).toHaveLength(11);
    expect(lines[0]).toBe("x".repeat(23));
  });

  it("renders the last lines across chunk boundaries", () => {
    const tail = new TailBuffer(64);
    for (const piece of ["alpha\nbe", "ta\ngam", "ma\n"]) tail.push(Buffer.from(piece));
    expect(tail.text(2)).toBe("beta\ngamma");
  });
});

describe("keepLastBytes", () => {
  it("cuts on a character boundary", () => {
    const cut = keepLastBytes("aé€", 4);
    expect(cut).toBe("€");
    expect(keepLastBytes("short", 100)).toBe("short");
  });
});
