/**
 * The command parser against GitHub's Markdown constructs: a `/harness` line counts only where
 * GitHub shows it as a line of a plain paragraph. Each row is a comment and the commands found.
 */
import { describe, expect, it } from "@jest/globals";
import { parseCommands } from "../../src/github/commands/index.js";

const kinds = (body: string): string[] => parseCommands(body).map((command) => (command.kind === "unknown" ? `unknown:${command.name}` : command.kind));

const RETRY = "/harness retry-blocked";

const TABLE: ReadonlyArray<[construct: string, body: string, expected: string[]]> = [
  ["a plain line", RETRY, ["retry-blocked"]],
  ["a paragraph's second line", `Thanks!\n${RETRY}`, ["retry-blocked"]],
  ["after a blank line following a quote", `> said\n\n${RETRY}`, ["retry-blocked"]],
  ["inline HTML comment closed before it", `<!-- x -->\n\n${RETRY}`, ["retry-blocked"]],
  ["after a closed <details>", `<details>\n\n${RETRY}\n\n</details>\n\n/harness help`, ["help"]],
  ["after a closed <pre>", `<pre>\n${RETRY}\n</pre>\n\n/harness help`, ["help"]],
  ["a code span naming a tag earlier on the line", `We fixed \`<details>\` and \`<pre>\`.\n${RETRY}`, ["retry-blocked"]],
  ["fenced code (backticks)", `\`\`\`\n${RETRY}\n\`\`\``, []],
  ["fenced code (tildes, info string)", `~~~ sh\n${RETRY}\n~~~`, []],
  ["indented code", `    ${RETRY}`, []],
  ["a tab-indented line", `\t${RETRY}`, []],
  ["a block quote", `> ${RETRY}`, []],
  ["a nested block quote", `> > ${RETRY}`, []],
  ["a quote's lazy continuation", `> said\n${RETRY}`, []],
  ["an HTML comment", `<!--\n${RETRY}\n-->`, []],
  ["an HTML comment opened mid-line", `note <!-- hidden\n${RETRY}\n-->`, []],
  ["an unclosed HTML comment", `<!--\n\n${RETRY}`, []],
  ["<pre>", `<pre>\n${RETRY}\n</pre>`, []],
  ["<PRE> in capitals, with attributes", `<PRE class="x">\n\n${RETRY}\n\n</PRE>`, []],
  ["<pre> opened mid-paragraph", `Output: <pre>\n${RETRY}\n</pre>`, []],
  ["<details> with blank lines inside", `<details>\n<summary>Old</summary>\n\n${RETRY}\n\n</details>`, []],
  ["nested <details>", `<details>\n<details>\n</details>\n\n${RETRY}\n</details>`, []],
  ["<summary> of <details>", `<details><summary>\n${RETRY}\n</summary></details>`, []],
  ["<textarea>", `<textarea>\n\n${RETRY}\n</textarea>`, []],
  ["<script>", `<script>\n${RETRY}\n</script>`, []],
  ["<style>", `<style>\n\n${RETRY}\n</style>`, []],
  ["an HTML block (div)", `<div>\n${RETRY}\n</div>`, []],
  ["an HTML block (closing tag first)", `</span>\n${RETRY}`, []],
  ["a processing instruction", `<?x\n${RETRY}\n?>`, []],
  ["a declaration", `<!DOCTYPE\n${RETRY}`, []],
  ["a setext heading (=)", `${RETRY}\n===`, []],
  ["a setext heading (-)", `${RETRY}\n---`, []],
  ["a multi-line setext heading", `${RETRY}\nand more\n===`, []],
  ["a table header row", `${RETRY} | x\n--- | ---`, []],
  ["a table body row", `a | b\n--- | ---\n${RETRY} | y`, []],
  ["an ATX heading", `# ${RETRY}`, []],
  ["a list item", `- ${RETRY}`, []],
  ["an ordered list item", `1. ${RETRY}`, []],
  ["a task list item", `- [ ] ${RETRY}`, []],
  ["inline code", `\`${RETRY}\``, []],
  ["emphasis", `*${RETRY}*`, []],
  ["a link", `[${RETRY}](https://example.invalid)`, []],
  ["an image's alt text", `![${RETRY}](x.png)`, []],
  ["a link reference definition", `[x]: ${RETRY}`, []],
  ["mid-line prose", `please ${RETRY}`, []],
  ["an escaped slash", `\\${RETRY}`, []],
  ["a footnote", `[^1]: ${RETRY}`, []],
];

describe("parseCommands against GitHub's Markdown constructs", () => {
  it.each(TABLE)("%s", (_construct, body, expected) => {
    expect(kinds(body)).toEqual(expected);
  });

  it("keeps the line numbers of commands found after hidden regions", () => {
    expect(parseCommands(`<details>\n${RETRY}\n</details>\n\n/harness help`)).toEqual([{ kind: "help", line: 5 }]);
  });
});
