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
      // Only the bytes of a character cut by the bound are lost: at most 3.
      expect(Buffer.byteLength(tail)).toBeGreaterThan(maxBytes - 4);
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

describe("TailBuffer's ring", () => {
  it("holds exactly what was pushed until it is full, then the last maxBytes in order", () => {
    const tail = new TailBuffer(8);
    expect(tail.bytes()).toEqual(Buffer.alloc(0));
    expect(tail.text()).toBe("");
    tail.push(Buffer.from("ab"));
    tail.push(Buffer.alloc(0));
    tail.push(Buffer.from("cde"));
    expect(tail.bytes().toString()).toBe("abcde");
    tail.push(Buffer.from("fghij"));
    expect(tail.bytes().toString()).toBe("cdefghij");
    expect(tail.bytesSeen).toBe(10);
  });

  it("keeps the last maxBytes of a chunk larger than the ring, and goes on after it", () => {
    const tail = new TailBuffer(8);
    tail.push(Buffer.from("xy"));
    tail.push(Buffer.from("0123456789abcdef"));
    expect(tail.bytes().toString()).toBe("89abcdef");
    tail.push(Buffer.from("XY"));
    expect(tail.bytes().toString()).toBe("abcdefXY");
    const exact = new TailBuffer(4);
    exact.push(Buffer.from("abcd"));
    exact.push(Buffer.from("e"));
    expect(exact.bytes().toString()).toBe("bcde");
  });

  it("keeps nothing with a bound of 0 or less, and still counts what passed", () => {
    for (const bound of [0, -5]) {
      const tail = new TailBuffer(bound);
      tail.push(Buffer.from("some output\n"));
      expect(tail.bytes()).toEqual(Buffer.alloc(0));
      expect(tail.text()).toBe("");
      expect(tail.bytesSeen).toBe(12);
    }
  });
});

describe("TailBuffer's memory", () => {
  it("holds nothing until bytes come, then grows with what it keeps, never past its bound", () => {
    const tail = new TailBuffer(32 * 1024 * 1024);
    tail.push(Buffer.alloc(0));
    expect(tail.capacity).toBe(0);
    tail.push(Buffer.from("a line\n"));
    expect(tail.capacity).toBe(16 * 1024);
    // Filled to the last byte, it has not grown yet.
    tail.push(Buffer.alloc(16 * 1024 - 7 - 7, "f"));
    expect(tail.capacity).toBe(16 * 1024);
    tail.push(Buffer.from("a line\n"));
    expect(tail.capacity).toBe(16 * 1024);
    const kilobyte = Buffer.alloc(1024, "k");
    for (let i = 0; i < 1024; i += 1) tail.push(kilobyte);
    // 1 MiB and 16 KiB kept: the ring doubled to 2 MiB, not to its 32 MiB bound.
    expect(tail.capacity).toBe(2 * 1024 * 1024);
    expect(tail.bytes().length).toBe(1024 * 1024 + 16 * 1024);
    const small = new TailBuffer(100);
    small.push(Buffer.from("x"));
    expect(small.capacity).toBe(100);
  });

  it("keeps the last maxBytes of everything pushed while it grows and once it wraps", () => {
    // Chunk sizes from a fixed sequence (no randomness), some larger than the bound.
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648);
    for (const bound of [1, 7, 16 * 1024 + 3, 50_000]) {
      const tail = new TailBuffer(bound);
      const all: Buffer[] = [];
      for (let i = 0; i < 60; i += 1) {
        const size = next() % (i % 10 === 9 ? bound * 2 + 1 : Math.ceil(bound / 3) + 1);
        const chunk = Buffer.alloc(size, String.fromCharCode(97 + (i % 26)));
        all.push(chunk);
        tail.push(chunk);
        const whole = Buffer.concat(all);
        expect(tail.bytes().equals(whole.subarray(Math.max(0, whole.length - bound)))).toBe(true);
        expect(tail.capacity).toBeLessThanOrEqual(bound);
      }
    }
  });
});

describe("tailText bounds", () => {
  it("gives nothing for a byte bound of 0 or less, and a zero line bound shows no line", () => {
    expect(tailText(Buffer.from("a\nb\n"), 20, 0)).toBe("");
    expect(tailText(Buffer.from("a\nb\n"), 20, -1)).toBe("");
    expect(tailText(Buffer.from("a\nb\n"), -1, 100)).toBe("");
    expect(tailText(Buffer.from("a\nb\n"), 1, 100)).toBe("b");
    // A bound between the length and twice the length keeps all of it.
    expect(tailText(Buffer.from("line one\nline two\n"), 20, 20)).toBe("line one\nline two");
  });
});
describe("UTF-8 edges", () => {
  it("drops a last character cut off at any byte, of every width, and keeps a whole one", () => {
    // 2, 3 and 4 bytes, with lead bytes at the edges of their ranges (0xc3, 0xe0, 0xe2, 0xf0).
    for (const char of ["é", "ก", "€", "😀"]) {
      const bytes = Buffer.from(char);
      for (let cut = 1; cut < bytes.length; cut += 1) {
        expect(tailText(Buffer.concat([Buffer.from("ok "), bytes.subarray(0, cut)]), 20, 1024)).toBe("ok ");
      }
      expect(tailText(Buffer.from(`ok ${char}`), 20, 1024)).toBe(`ok ${char}`);
    }
  });

  it("drops a cut-off lead byte even of an overlong form, and skips at most 3 leading continuation bytes", () => {
    expect(tailText(Buffer.from([0x41, 0xc0]), 20, 1024)).toBe("A");
    expect(tailText(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x41]), 20, 1024)).toBe("\uFFFDA");
    expect(tailText(Buffer.from([0x80, 0x80, 0x41]), 20, 1024)).toBe("A");
    expect(tailText(Buffer.from([0x80, 0x80]), 20, 1024)).toBe("");
  });

  it("keepLastBytes keeps a text within the bound whole", () => {
    expect(keepLastBytes("short", 7)).toBe("short");
    expect(keepLastBytes("short", 5)).toBe("short");
    expect(keepLastBytes("€€", 4)).toBe("€");
  });
});
