/** Markdown that holds whatever text it is given: check-run summaries and agents' prompts both use it. */

/** Longest run of `char` in `text`. */
function longestRun(text: string, char: string): number {
  let longest = 0;
  let current = 0;
  for (let i = 0; i < text.length; i += 1) {
    current = text[i] === char ? current + 1 : 0;
    if (current > longest) longest = current;
  }
  return longest;
}

/** A fenced code block whose fence is longer than any backtick run inside, so output cannot close it. */
export function codeBlock(text: string, info = ""): string {
  const fence = "`".repeat(Math.max(3, longestRun(text, "`") + 1));
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  return `${fence}${info}\n${body}\n${fence}`;
}

/** Inline code that survives backticks in the value. */
export function inlineCode(text: string): string {
  const single = text.replace(/[\r\n]+/g, " ");
  const fence = "`".repeat(longestRun(single, "`") + 1);
  const pad = single.startsWith("`") || single.endsWith("`") ? " " : "";
  return `${fence}${pad}${single}${pad}${fence}`;
}
