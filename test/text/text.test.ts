import { codeBlock, inlineCode, stripAnsi } from "../../src/text/index.js";

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
