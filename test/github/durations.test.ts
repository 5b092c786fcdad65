/** The two duration formats, on purpose: Markdown's words for GitHub, the terminal's compact one. */
import { describe, expect, it } from "@jest/globals";
import { formatDuration as markdownDuration } from "../../src/github/report/render/markdown.js";
import { formatDuration as terminalDuration } from "../../src/pipeline/index.js";

describe("durations", () => {
  it("in Markdown: milliseconds, tenths of seconds, then minutes and whole seconds that never reach 60", () => {
    expect([undefined, 250, 1234, 65_400, 119_600, 3_600_000].map(markdownDuration)).toEqual(["", "250 ms", "1.2 s", "1 min 5 s", "2 min 0 s", "60 min 0 s"]);
  });

  it("on a terminal: the compact form, seconds padded", () => {
    expect([250, 1234, 65_400, 119_600].map(terminalDuration)).toEqual(["250ms", "1.2s", "1m05s", "2m00s"]);
  });
});
