/** `npm run bench -- <name> --help` and a mistyped option: a usage line and a one-line error, never a stack trace. */
import { exec } from "../../src/exec/index.js";
import { argumentError, asksForHelp, usageOf } from "../../bench/lib/usage.js";
import { parseArgs } from "node:util";

const RUN = "bench/run.ts";

function parseError(args: string[]): unknown {
  try {
    parseArgs({ args, options: { count: { type: "string" } } });
  } catch (error) {
    return error;
  }
  throw new Error(`parseArgs took ${args.join(" ")}`);
}

describe("bench usage", () => {
  it("takes a benchmark's usage line from its description, with or without `Run:`", () => {
    const described = "/**\n * Webhook answer latency.\n *\n *   npm run bench -- webhook-latency [--count 2000]\n */\nconst x = 1;\n";
    expect(usageOf("webhook-latency", described)).toBe("npm run bench -- webhook-latency [--count 2000]");
    expect(usageOf("exec-memory", "/**\n * Memory.\n * Run: npm run bench -- exec-memory [--reps 3]\n */\n")).toBe("npm run bench -- exec-memory [--reps 3]");
    // Another benchmark's line, or one past the description, is not this one's usage.
    expect(usageOf("startup", "/**\n * npm run bench -- startup-slow [--x]\n */\n// npm run bench -- startup [--y]\n")).toBe("npm run bench -- startup");
    expect(usageOf("github-text", "import x from 'y';\n")).toBe("npm run bench -- github-text");
  });

  it("asks for help with --help or -h, not after --", () => {
    expect(asksForHelp(["--rates", "300", "--help"])).toBe(true);
    expect(asksForHelp(["-h"])).toBe(true);
    expect(asksForHelp(["--rates", "300"])).toBe(false);
    expect(asksForHelp(["--", "--help"])).toBe(false);
  });

  it("says a command-line error of parseArgs in its first sentence, and nothing of other errors", () => {
    expect(argumentError(parseError(["--bogus"]))).toBe("Unknown option '--bogus'");
    expect(argumentError(parseError(["--count"]))).toBe("Option '--count <value>' argument missing");
    expect(argumentError(parseError(["stray"]))).toBe("Unexpected argument 'stray'.");
    expect(argumentError(new Error("Unknown option '--bogus'"))).toBeUndefined();
    expect(argumentError(Object.assign(new Error("disk full"), { code: "ENOSPC" }))).toBeUndefined();
    expect(argumentError(undefined)).toBeUndefined();
  });

  it("answers --help with the benchmark's usage, without running it, and a bad option in one line", async () => {
    const help = await exec([process.execPath, "--import", "tsx", RUN, "webhook-latency", "--help"], {
      cwd: process.cwd(),
      captureStdout: true,
      timeoutMs: 60_000,
    });
    expect(help.exitCode).toBe(0);
    expect(help.stdout?.toString("utf8")).toBe("usage: npm run bench -- webhook-latency [--rates 300,800,1200,2000] [--count 2000] [--reps 4] [--alloc]\n");
    const bad = await exec([process.execPath, "--import", "tsx", RUN, "webhook-latency", "--bogus"], {
      cwd: process.cwd(),
      captureStdout: true,
      timeoutMs: 60_000,
    });
    expect(bad.exitCode).toBe(2);
    expect(bad.stdout?.toString("utf8")).toBe("");
    // The tail (stderr here) is kept without its last newline.
    expect(bad.tail).toBe(
      "bench webhook-latency: Unknown option '--bogus'\nusage: npm run bench -- webhook-latency [--rates 300,800,1200,2000] [--count 2000] [--reps 4] [--alloc]",
    );
  });
});
