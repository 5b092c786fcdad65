/**
 * Where a child's output goes: a capped log keeps its head and its tail, captured stdout keeps
 * its head, a log on a full disk is reported without stopping the run, and a tail is read back
 * from a log the child wrote directly.
 */
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exec, ExecLogError } from "../../src/exec/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

/** `count` lines `line-0001` … (10 bytes each with the newline), printed by one `printf`. */
const numbered = (count: number): string => Array.from({ length: count }, (_, i) => `line-${String(i + 1).padStart(4, "0")}\n`).join("");
const printing = (text: string): string[] => ["sh", "-c", 'printf "%s" "$1"', "sh", text];

describe("a capped log (logCapBytes)", () => {
  it("keeps the first and the last half of the cap, with a line saying how much was cut between them", async () => {
    const dir = makeTempDir();
    const logPath = join(dir, "capped.log");
    const text = numbered(100); // 1,000 bytes
    const result = await exec(printing(text), { cwd: dir, logPath, logCapBytes: 101 });
    expect(result.exitCode).toBe(0);
    // An odd cap: 50 bytes of head, 51 of tail.
    const marker = "\n[harness: log cut: 899 of 1000 bytes left out here; the first 50 and the last 51 are kept]\n";
    expect(readFileSync(logPath, "utf8")).toBe(text.slice(0, 50) + marker + text.slice(-51));
    expect(result.tail.split("\n").at(-1)).toBe("line-0100");
  });

  it("writes output within the cap as it came, without a marker, also past the head", async () => {
    const dir = makeTempDir();
    const small = numbered(3);
    await exec(printing(small), { cwd: dir, logPath: join(dir, "small.log"), logCapBytes: 100 });
    expect(readFileSync(join(dir, "small.log"), "utf8")).toBe(small);
    // 80 bytes: 50 into the head and 30 kept by the tail, nothing cut.
    const most = numbered(8);
    await exec(printing(most), { cwd: dir, logPath: join(dir, "most.log"), logCapBytes: 100 });
    expect(readFileSync(join(dir, "most.log"), "utf8")).toBe(most);
  });

  it("keeps head and tail across many chunks, and notes a program that cannot start", async () => {
    const dir = makeTempDir();
    const logPath = join(dir, "chunks.log");
    // Ten separate writes of 1,000 bytes; whatever the pipe makes of them, the log is the same.
    const block = (n: number): string => `${String(n)}`.repeat(999) + "\n";
    const script = 'for n in 0 1 2 3 4 5 6 7 8 9; do printf "%s" "$(printf "%0999d" 0 | tr 0 "$n")"; echo; done';
    await exec(["sh", "-c", script], { cwd: dir, logPath, logCapBytes: 4000 });
    const all = Array.from({ length: 10 }, (_, n) => block(n)).join("");
    expect(readFileSync(logPath, "utf8")).toBe(
      `${all.slice(0, 2000)}\n[harness: log cut: 6000 of 10000 bytes left out here; the first 2000 and the last 2000 are kept]\n${all.slice(-2000)}`,
    );
    const missing = await exec(["no-such-program-harness"], { cwd: dir, logPath: join(dir, "missing.log"), logCapBytes: 4000 });
    expect(missing.spawnError).toContain("ENOENT");
    expect(readFileSync(join(dir, "missing.log"), "utf8")).toContain("exec: could not start no-such-program-harness");
  });

  it("makes the reader wait for a capped log whose head takes more than a stream buffers", async () => {
    const dir = makeTempDir();
    const logPath = join(dir, "big-head.log");
    const result = await exec(["sh", "-c", "yes 0123456789 | head -c 3000000"], { cwd: dir, logPath, logCapBytes: 8_000_000 });
    expect(result.exitCode).toBe(0);
    expect(readFileSync(logPath, "utf8")).toBe("0123456789\n".repeat(300_000).slice(0, 3_000_000));
  });
});

describe("captured stdout", () => {
  it("keeps the first captureBytes bytes and says it was cut", async () => {
    const dir = makeTempDir();
    const text = numbered(50);
    const cut = await exec(printing(text), { cwd: dir, captureStdout: true, captureBytes: 25 });
    expect(cut.stdout?.toString()).toBe(text.slice(0, 25));
    expect(cut.stdoutTruncated).toBe(true);
    const exact = await exec(printing(text), { cwd: dir, captureStdout: true, captureBytes: 500 });
    expect(exact.stdout?.toString()).toBe(text);
    expect(exact.stdoutTruncated).toBe(false);
  });

  it("keeps the head across many chunks, and the log gets everything", async () => {
    const dir = makeTempDir();
    const logPath = join(dir, "all.log");
    const result = await exec(["sh", "-c", "yes 0123456789 | head -c 3000000"], { cwd: dir, captureStdout: true, captureBytes: 100_000, logPath });
    expect(result.stdout?.toString()).toBe("0123456789\n".repeat(100_000).slice(0, 100_000));
    expect(result.stdoutTruncated).toBe(true);
    expect(readFileSync(logPath, "utf8")).toBe("0123456789\n".repeat(300_000).slice(0, 3_000_000));
  });

  it("is absent when not asked for", async () => {
    const result = await exec(["echo", "x"], { cwd: makeTempDir() });
    expect(result).not.toHaveProperty("stdout");
    expect(result).not.toHaveProperty("stdoutTruncated");
    expect(result.tail).toBe("x");
  });
});

describe("a log that fails while the child runs", () => {
  it("reports the write error, and the run goes on with its whole tail and stdout (a full disk)", async () => {
    // /dev/full accepts the open and refuses every write with ENOSPC. Much more output than a
    // stream buffers, so the reader is paused on the log and must be resumed by its failure.
    const script = "yes 0123456789 | head -c 2200000; echo last line";
    for (const captureStdout of [true, false]) {
      const result = await exec(["sh", "-c", script], { cwd: makeTempDir(), logPath: "/dev/full", captureStdout });
      expect(result.exitCode).toBe(0);
      expect(result.logError).toMatch(/ENOSPC/);
      expect(result.tail.split("\n").at(-1)).toBe("last line");
      if (captureStdout) expect(result.stdout?.length).toBe(2_200_000 + "last line\n".length);
    }
  });

  it("names a log that cannot be opened before anything runs, also when stdout is captured", async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, "file"), "");
    const touched = join(dir, "ran");
    const failure = await exec(["touch", touched], { cwd: dir, logPath: join(dir, "file", "x.log"), captureStdout: true }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExecLogError);
    expect(failure).toMatchObject({ name: "ExecLogError", logPath: join(dir, "file", "x.log"), failureClass: "internal-error" });
    expect((failure as Error).message).toMatch(/^cannot open log file .*x\.log: E[A-Z]+: /);
    expect(() => readFileSync(touched)).toThrow();
  });
});

describe("the log file once the run is over", () => {
  /** How many descriptors of `path` this process holds. */
  const descriptors = (path: string): number =>
    readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === path;
      } catch {
        return false; // closed while we looked
      }
    }).length;
  const holds = (path: string): boolean => descriptors(path) > 0;

  it("is closed, whether the child wrote it directly, through pipes, or capped", async () => {
    const dir = makeTempDir();
    for (const [name, extra] of [
      ["direct.log", {}],
      ["piped.log", { captureStdout: true }],
      ["capped.log", { logCapBytes: 10 }],
    ] as const) {
      const logPath = join(dir, name);
      await exec(["sh", "-c", "echo some output that is longer than the cap"], { cwd: dir, logPath, ...extra });
      expect(holds(logPath)).toBe(false);
    }
  });

  it("is closed when it is not a regular file (/dev/null), which the child cannot write directly", async () => {
    const before = descriptors("/dev/null");
    const result = await exec(["sh", "-c", "echo kept"], { cwd: makeTempDir(), logPath: "/dev/null" });
    expect(result.tail).toBe("kept");
    expect(descriptors("/dev/null")).toBe(before);
  });
});

describe("a log in a folder that does not exist yet", () => {
  it("gets its folder made, whether the child writes it or the harness's pipes do", async () => {
    const dir = makeTempDir();
    for (const [name, extra] of [
      ["direct", {}],
      ["piped", { captureStdout: true }],
    ] as const) {
      const logPath = join(dir, name, "deeper", "run.log");
      await exec(["echo", name], { cwd: dir, logPath, ...extra });
      expect(readFileSync(logPath, "utf8")).toBe(`${name}\n`);
    }
  });

  it("is named before anything runs when the folder cannot be made, also when the child would write it", async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, "file"), "");
    const touched = join(dir, "ran");
    const logPath = join(dir, "file", "x.log");
    const failure = await exec(["touch", touched], { cwd: dir, logPath }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExecLogError);
    expect(failure).toMatchObject({ logPath, failureClass: "internal-error" });
    expect((failure as Error).message).toMatch(/^cannot open log file .*x\.log: E[A-Z]+: /);
    expect(() => readFileSync(touched)).toThrow();
  });
});

describe("a log written through the harness's pipes", () => {
  it("appends to what the log held, and the tail is this run's output only", async () => {
    const dir = makeTempDir();
    const logPath = join(dir, "piped.log");
    writeFileSync(logPath, "earlier\n");
    const result = await exec(["sh", "-c", "echo out; echo err >&2"], { cwd: dir, logPath, captureStdout: true });
    expect(readFileSync(logPath, "utf8")).toMatch(/^earlier\n(out\nerr\n|err\nout\n)$/);
    expect(result.stdout?.toString()).toBe("out\n");
    expect(result.tail.split("\n").sort()).toEqual(["err", "out"]);
  });
});

describe("a log written by the child directly", () => {
  it("is the child's stdout and stderr when nothing is captured or capped, the harness's pipes otherwise", async () => {
    const dir = makeTempDir();
    const logPath = join(dir, "fds.log");
    const script = "readlink /proc/self/fd/1; readlink /proc/self/fd/2 >&2";
    await exec(["sh", "-c", script], { cwd: dir, logPath });
    expect(readFileSync(logPath, "utf8")).toBe(`${logPath}\n${logPath}\n`);
    for (const [name, extra] of [
      ["captured.log", { captureStdout: true }],
      ["capped.log", { logCapBytes: 1000 }],
    ] as const) {
      await exec(["sh", "-c", script], { cwd: dir, logPath: join(dir, name), ...extra });
      expect(readFileSync(join(dir, name), "utf8")).toMatch(/^(pipe|socket):\[\d+\]\n(pipe|socket):\[\d+\]\n$/);
    }
  });

  it("reads the tail back within tailBytes, from this run's output only", async () => {
    const dir = makeTempDir();
    const logPath = join(dir, "direct.log");
    writeFileSync(logPath, "earlier\n");
    const result = await exec(printing(numbered(20)), { cwd: dir, logPath, tailBytes: 25 });
    // The last 25 bytes of this run's output, whatever the log held before it.
    expect(result.tail).toBe("0018\nline-0019\nline-0020");
    expect(readFileSync(logPath, "utf8")).toBe(`earlier\n${numbered(20)}`);
  });

  it("notes a program that cannot start in the log", async () => {
    const dir = makeTempDir();
    const logPath = join(dir, "direct.log");
    const result = await exec(["no-such-program-harness"], { cwd: dir, logPath });
    expect(result.spawnError).toContain("ENOENT");
    expect(readFileSync(logPath, "utf8")).toBe("exec: could not start no-such-program-harness: ENOENT: program no-such-program-harness not found\n");
    expect(result.tail).toBe("exec: could not start no-such-program-harness: ENOENT: program no-such-program-harness not found");
  });
});
