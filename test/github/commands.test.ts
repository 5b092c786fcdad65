import { describe, expect, it } from "@jest/globals";
import { parseCommands, MAX_COMMANDS, MAX_COMMENT_CHARS } from "../../src/github/index.js";

const kinds = (body: string): string[] => parseCommands(body).map((command) => (command.kind === "unknown" ? `unknown:${command.name}` : command.kind));

describe("parseCommands", () => {
  it("finds commands at the start of a line with up to three spaces", () => {
    expect(parseCommands("/harness retry-blocked")).toEqual([{ kind: "retry-blocked", line: 1 }]);
    expect(parseCommands("thanks!\n   /harness help\r\n")).toEqual([{ kind: "help", line: 2 }]);
    expect(kinds("/harness retry-blocked please")).toEqual(["retry-blocked"]);
    expect(kinds("/harness")).toEqual(["help"]);
  });

  it("reports unknown commands by name and ignores near-misses", () => {
    expect(kinds("/harness deploy now")).toEqual(["unknown:deploy"]);
    expect(kinds("/harness retry-blockedx")).toEqual(["unknown:retry-blockedx"]);
    expect(kinds("/harnessretry-blocked\n/harnes retry-blocked\nplease /harness retry-blocked\n- /harness help")).toEqual([]);
  });

  it("ignores indented code and tabs", () => {
    expect(kinds("    /harness retry-blocked")).toEqual([]);
    expect(kinds("\t/harness retry-blocked")).toEqual([]);
    expect(kinds("  \t/harness retry-blocked")).toEqual([]);
  });

  it("ignores fenced code until the matching closing fence", () => {
    expect(kinds("```\n/harness retry-blocked\n```\n/harness help")).toEqual(["help"]);
    expect(kinds("~~~~ sh\n/harness retry-blocked\n~~~\n/harness help\n~~~~\n/harness help")).toEqual(["help"]);
    // A backtick fence is not closed by tildes or a shorter run, and runs to the end when unclosed.
    expect(kinds("````\n```\n~~~~\n/harness retry-blocked")).toEqual([]);
    // A closing fence may not carry an info string.
    expect(kinds("```\n``` js\n/harness retry-blocked\n```\n/harness help")).toEqual(["help"]);
    // A line with backticks after the run is inline code, not a fence.
    expect(kinds("``` a`b\n/harness help")).toEqual(["help"]);
  });

  it("ignores block quotes and their lazy continuation lines", () => {
    expect(kinds("> /harness retry-blocked")).toEqual([]);
    expect(kinds("   >/harness retry-blocked")).toEqual([]);
    expect(kinds("> someone said\n/harness retry-blocked")).toEqual([]);
    expect(kinds("> someone said\n\n/harness retry-blocked")).toEqual(["retry-blocked"]);
  });

  it("ignores HTML comments", () => {
    expect(kinds("<!--\n/harness retry-blocked\n-->\n/harness help")).toEqual(["help"]);
    expect(kinds("<!-- note -->\n/harness help")).toEqual(["help"]);
  });

  it("stops after the cap and does not scan past GitHub's comment limit", () => {
    expect(parseCommands("/harness help\n".repeat(50))).toHaveLength(MAX_COMMANDS);
    const late = `${"x".repeat(MAX_COMMENT_CHARS)}\n/harness retry-blocked`;
    expect(parseCommands(late)).toEqual([]);
    expect(kinds(`${"x".repeat(MAX_COMMENT_CHARS - 30)}\n/harness retry-blocked`)).toEqual(["retry-blocked"]);
  });

  it("is linear and fast on megabytes of near-misses", () => {
    const nearMisses = ["/harnes retry-blocked", " /harnessx", "> /harness retry-blocked", "```", "/harness", "    /harness help", "<!-- -->", "~~", "``` a`"];
    const build = (bytes: number): string => {
      const lines: string[] = [];
      let size = 0;
      for (let i = 0; size < bytes; i += 1) {
        const line = nearMisses[i % nearMisses.length] === "/harness" ? "/harness-not" : (nearMisses[i % nearMisses.length] ?? "");
        lines.push(line);
        size += line.length + 1;
      }
      return lines.join("\n");
    };
    const oneMiB = build(1 << 20);
    const twoMiB = build(2 << 20);
    const once = (body: string): number => {
      const start = process.hrtime.bigint();
      parseCommands(body, { maxChars: Infinity, maxCommands: Infinity });
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    const time = (body: string): number => {
      let best = Infinity;
      for (let round = 0; round < 5; round += 1) best = Math.min(best, once(body));
      return best;
    };
    time(oneMiB); // warm up the JIT
    // Interleaved best-of runs, so load from other processes weighs on both sizes alike.
    let one = Infinity;
    let two = Infinity;
    for (let round = 0; round < 9; round += 1) {
      one = Math.min(one, once(oneMiB));
      two = Math.min(two, once(twoMiB));
    }
    expect(one).toBeLessThan(50);
    expect(two).toBeLessThan(3 * Math.max(one, 1));
    // A single 1 MiB line with no newline is near-miss text too.
    expect(time("/harnes ".repeat(1 << 17))).toBeLessThan(50);
  });
});

describe("parseCommands on adversarial input", () => {
  it("stays linear inside an HTML comment or a fence that never closes", () => {
    const lines = "/harness retry-blocked\n".repeat(40_000);
    for (const opener of ["<!--\n", "```\n", "> quote\n"]) {
      const body = `${opener}${lines}`;
      expect(parseCommands(body, { maxChars: Infinity })).toEqual([]);
      // Best of a few runs: a quadratic scan would take seconds here, not a scheduler hiccup's worth.
      let best = Infinity;
      for (let round = 0; round < 3; round += 1) {
        const start = process.hrtime.bigint();
        parseCommands(body, { maxChars: Infinity });
        best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e6);
      }
      expect(best).toBeLessThan(50);
    }
    expect(kinds("<!-- a\nb --> tail\n/harness help")).toEqual(["help"]);
  });
});
