import { describe, expect, it } from "@jest/globals";
import { parseCommands, MAX_COMMANDS, MAX_COMMENT_CHARS } from "../../src/github/commands/index.js";

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

  // Speed and linearity on megabytes are benchmark claims (bench/github-text.ts); here only the result.
  it("finds nothing in megabytes of near-misses, with no cap", () => {
    const nearMisses = [
      "/harnes retry-blocked",
      " /harnessx",
      "> /harness retry-blocked",
      "```",
      "/harness-not",
      "    /harness help",
      "<!-- -->",
      "~~",
      "``` a`",
    ];
    const lines: string[] = [];
    for (let size = 0, i = 0; size < 2 << 20; i += 1) {
      const line = nearMisses[i % nearMisses.length] ?? "";
      lines.push(line);
      size += line.length + 1;
    }
    expect(parseCommands(lines.join("\n"), { maxChars: Infinity, maxCommands: Infinity })).toEqual([]);
    // A single 1 MiB line with no newline is near-miss text too.
    expect(parseCommands("/harnes ".repeat(1 << 17), { maxChars: Infinity })).toEqual([]);
    // The same text with one real command after it still finds that command, on the right line.
    expect(parseCommands(`${lines.slice(0, 9000).join("\n")}\n\n/harness help`, { maxChars: Infinity, maxCommands: Infinity })).toEqual([
      { kind: "help", line: 9002 },
    ]);
    // A code span naming a tag hides nothing.
    expect(parseCommands("`<details>` ".repeat(1 << 14) + "\n/harness help", { maxChars: Infinity })).toEqual([{ kind: "help", line: 2 }]);
  });
});

describe("parseCommands on adversarial input", () => {
  it("finds nothing inside an HTML comment, a fence, a quote, <pre> or <details> that never closes", () => {
    const lines = "/harness retry-blocked\n".repeat(40_000);
    for (const opener of ["<!--\n", "```\n", "> quote\n", "<pre>\n", "<details>\n\n", "text <details>\n\n"]) {
      expect([opener, parseCommands(`${opener}${lines}`, { maxChars: Infinity })]).toEqual([opener, []]);
    }
    expect(kinds("<!-- a\nb --> tail\n/harness help")).toEqual(["help"]);
  });
});
