import { describe, expect, it } from "@jest/globals";
import {
  boundCheckRunOutput,
  boundComment,
  boundMarkdown,
  CHECK_RUN_OUTPUT_MAX_BYTES,
  COMMENT_MAX_CHARS,
  keepLastBytes,
  TRUNCATION_NOTE,
  truncateToBytes,
  truncateToChars,
  utf8Bytes,
} from "../../src/github/index.js";

/** True when `text` survives a UTF-8 round trip, i.e. holds no broken character. */
const wellFormed = (text: string): boolean => Buffer.from(text, "utf8").toString("utf8") === text && !text.includes("\uFFFD");

describe("truncation helpers", () => {
  it("never splits a multibyte character", () => {
    const text = "aé€😀".repeat(10); // 1, 2, 3 and 4 bytes
    for (let max = 0; max <= utf8Bytes(text); max += 1) {
      const cut = truncateToBytes(text, max);
      expect(utf8Bytes(cut)).toBeLessThanOrEqual(max);
      expect(text.startsWith(cut)).toBe(true);
      expect(wellFormed(cut)).toBe(true);
      expect(utf8Bytes(cut)).toBeGreaterThan(max - 4);
      const end = keepLastBytes(text, max);
      expect(utf8Bytes(end)).toBeLessThanOrEqual(max);
      expect(text.endsWith(end)).toBe(true);
      expect(wellFormed(end)).toBe(true);
    }
    expect(truncateToChars("a😀", 2)).toBe("a");
    expect(truncateToChars("a😀", 3)).toBe("a😀");
  });
});

describe("boundMarkdown", () => {
  it("leaves text within the limit alone", () => {
    expect(boundCheckRunOutput("short ✅")).toBe("short ✅");
    expect(boundComment("x".repeat(COMMENT_MAX_CHARS))).toBe("x".repeat(COMMENT_MAX_CHARS));
  });

  it("bounds check-run text by UTF-8 bytes with multibyte content", () => {
    const text = "€".repeat(40_000); // 120,000 bytes but only 40,000 characters
    const bounded = boundCheckRunOutput(text);
    expect(utf8Bytes(bounded)).toBeLessThanOrEqual(CHECK_RUN_OUTPUT_MAX_BYTES);
    expect(utf8Bytes(bounded)).toBeGreaterThan(CHECK_RUN_OUTPUT_MAX_BYTES - 100);
    expect(wellFormed(bounded)).toBe(true);
    expect(bounded.endsWith(`\n\n${TRUNCATION_NOTE}`)).toBe(true);
  });

  it("bounds comments by characters without splitting a surrogate pair", () => {
    const bounded = boundComment("😀".repeat(COMMENT_MAX_CHARS));
    expect(bounded.length).toBeLessThanOrEqual(COMMENT_MAX_CHARS);
    expect(wellFormed(bounded)).toBe(true);
    expect(bounded.endsWith(TRUNCATION_NOTE)).toBe(true);
  });

  it("closes a code fence the cut left open", () => {
    const markdown = `# Log\n\n\`\`\`\`text\n${"line ``` inside\n".repeat(10_000)}\`\`\`\`\nafter`;
    const bounded = boundMarkdown(markdown, { unit: "bytes", max: 1000 });
    expect(utf8Bytes(bounded)).toBeLessThanOrEqual(1000);
    expect(bounded.endsWith(`\n\`\`\`\`\n\n${TRUNCATION_NOTE}`)).toBe(true);
    const tilde = boundMarkdown(`~~~\n${"ü".repeat(5000)}\n~~~`, { unit: "chars", max: 300 });
    expect(tilde.length).toBeLessThanOrEqual(300);
    expect(tilde.endsWith(`\n~~~\n\n${TRUNCATION_NOTE}`)).toBe(true);
  });

  it("adds no fence when the cut is outside one", () => {
    const markdown = `\`\`\`\ncode\n\`\`\`\n${"plain text ".repeat(1000)}`;
    const bounded = boundMarkdown(markdown, { unit: "bytes", max: 500 });
    const kept = bounded.slice(0, bounded.length - `\n\n${TRUNCATION_NOTE}`.length);
    expect(bounded).toBe(`${kept}\n\n${TRUNCATION_NOTE}`);
    expect(markdown.startsWith(kept)).toBe(true);
    expect(kept.length).toBeGreaterThan(400);
    expect(bounded.match(/```/g)).toHaveLength(2);
  });
});
