import { codeBlock, fencedBlocks, inlineCode, openFenceAtEnd, stripAnsi } from "../../src/text/index.js";

describe("stripAnsi", () => {
  it("removes colours, cursor moves and terminal titles, and keeps the text", () => {
    expect(stripAnsi("\u001b[31mred\u001b[0m \u001b[2K\u001b[1Gline \u001b]0;title\u0007done \u001b]8;;http://x\u001b\\link")).toBe("red line done link");
  });
});

describe("codeBlock", () => {
  it("uses a fence longer than any backtick run inside, so the text cannot close it", () => {
    expect(codeBlock("a ```` b\n", "text")).toBe("`````text\na ```` b\n`````");
    expect(codeBlock("plain")).toBe("```\nplain\n```");
  });
});

describe("inlineCode", () => {
  it("is one line and survives backticks at its edges", () => {
    expect(inlineCode("a\nb")).toBe("`a b`");
    expect(inlineCode("`x`")).toBe("`` `x` ``");
  });
});

describe("fencedBlocks", () => {
  it("finds each block with its info word and body, by CommonMark's fence rules", () => {
    const text = [
      "intro",
      "```harness-plan json",
      '{"a": 1}',
      "",
      "``",
      "````",
      "~~~",
      "inside ``` tilde",
      "~~~~",
      "```x`y",
      "not a fence: backtick in its info",
    ].join("\n");
    expect(fencedBlocks(text)).toEqual([
      { fence: { char: "`", length: 3, info: "harness-plan" }, body: '{"a": 1}\n\n``', closed: true },
      { fence: { char: "~", length: 3, info: "" }, body: "inside ``` tilde", closed: true },
    ]);
  });

  it("reads CRLF text, an empty block, an indented fence, and one left open at the end", () => {
    expect(fencedBlocks("```\r\n```\r\n   ~~~ plan\r\na\r\nb\r\n~~~\r\n```text\r\nlast")).toEqual([
      { fence: { char: "`", length: 3, info: "" }, body: "", closed: true },
      { fence: { char: "~", length: 3, info: "plan" }, body: "a\nb", closed: true },
      { fence: { char: "`", length: 3, info: "text" }, body: "last", closed: false },
    ]);
    expect(openFenceAtEnd("```text\r\nlast")).toEqual({ char: "`", length: 3, info: "text" });
    // Four spaces make an indented code line, not a fence.
    expect(fencedBlocks("    ```\nx\n    ```")).toEqual([]);
  });
});
