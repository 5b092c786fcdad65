/**
 * The GitHub room's text work against trivial scans of the same input, in the same run:
 *   parse  — parseCommands over 1 MiB and 2 MiB comments of near-misses (no cap), against a
 *            baseline that only splits the text into lines and tests each with startsWith;
 *   redact — redactSecrets over a 64 KiB output tail (no given secrets, then 12 in all their
 *            forms, as a story's reporter has), against one plain regex pass over it;
 *   render — renderVerifierCheck (redact, keep the tail's end, fence, bound to 65,535 bytes)
 *            with a 64 KiB multibyte tail, against JSON.stringify of the rendered output
 *            (what posting it costs anyway).
 *   also   — unclosed comment/fence/quote at 80k vs 40k lines, one 1 MiB line, and redaction of a
 *            1.2 MB near-miss line (the linearity claims the tests used to time).
 * Each figure is the median of paired ratios, subject and baseline interleaved A B B A (bench/lib/paired.ts).
 *
 * Run: node --import tsx bench/github-text.ts [--reps 15]
 */
import { parseArgs } from "node:util";
import { parseCommands } from "../src/github/commands/index.js";
import { redactSecrets } from "../src/github/index.js";
import { renderVerifierCheck } from "../src/github/report/index.js";
import { emptySnapshot, reduceSnapshot, type HistoryEvent } from "../src/pipeline/events.js";
import { formatPaired, measurePaired } from "./lib/paired.js";

const { values } = parseArgs({ options: { reps: { type: "string", default: "15" } } });
const REPS = Number(values.reps);

/** A synchronous piece of work as a paired side: its duration in ms. */
function timed(work: () => unknown): () => Promise<number> {
  return () => {
    const start = process.hrtime.bigint();
    work();
    return Promise.resolve(Number(process.hrtime.bigint() - start) / 1e6);
  };
}

/** Subject ÷ baseline, interleaved A B B A (bench/lib/paired.ts), one report line. */
async function pair(label: string, subject: () => unknown, baseline: () => unknown): Promise<void> {
  console.log(formatPaired(label, await measurePaired(timed(subject), timed(baseline), REPS)));
}

const NEAR_MISSES = [
  "/harnes retry-blocked",
  " /harness-x",
  "> /harness retry-blocked",
  "```",
  "    /harness help",
  "<!-- -->",
  "text with /harness retry-blocked inside",
  "~~~",
  "```",
  "a `<details>` b",
  "<pre>x</pre>",
  "cell | /harness help",
];
function nearMissComment(bytes: number): string {
  const lines: string[] = [];
  for (let size = 0, i = 0; size < bytes; i += 1) {
    const line = NEAR_MISSES[i % NEAR_MISSES.length] ?? "";
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

function baselineScan(body: string): number {
  let hits = 0;
  for (const line of body.split("\n")) if (line.startsWith("/harness ")) hits += 1;
  return hits;
}

const one = nearMissComment(1 << 20);
const two = nearMissComment(2 << 20);
const unbounded = { maxChars: Infinity, maxCommands: Infinity };
console.log(`reps=${REPS}; every line is subject ÷ baseline, interleaved per repetition`);
await pair(
  "parse 1 MiB ÷ split+startsWith",
  () => parseCommands(one, unbounded),
  () => baselineScan(one),
);
await pair(
  "parse 2 MiB ÷ parse 1 MiB (linear = 2.00×)",
  () => parseCommands(two, unbounded),
  () => parseCommands(one, unbounded),
);
// Text that never closes (a comment, a fence, a quote) and one 1 MiB line: 80,000 lines against 40,000.
const unclosed = (opener: string, lines: number): string => `${opener}${"/harness retry-blocked\n".repeat(lines)}`;
for (const opener of ["<!--\n", "```\n", "> quote\n"]) {
  const [small, large] = [unclosed(opener, 40_000), unclosed(opener, 80_000)];
  await pair(
    `parse unclosed ${opener.trim()} 80k ÷ 40k lines (linear = 2.00×)`,
    () => parseCommands(large, unbounded),
    () => parseCommands(small, unbounded),
  );
}
const oneLine = "/harnes ".repeat(1 << 17);
await pair(
  "parse one 1 MiB line ÷ split+startsWith",
  () => parseCommands(oneLine, unbounded),
  () => baselineScan(oneLine),
);

const tail = `${"npm ERR! 错误 ✗ at https://x-access-token:ghs_abcdefghijklmnopqrstuv@host/r.git\n".repeat(700)}`.slice(0, 64 * 1024);
const regexBase = (): string => tail.replace(/ghs_/g, "x");
await pair("redact 64 KiB tail ÷ one regex pass", () => redactSecrets(tail, ["a-secret-value"]), regexBase);
// What the reporter redacts with in a story: a few tokens, the webhook secret, the private key's lines (every form of each).
const storySecrets = Array.from({ length: 12 }, (_, i) => `secret-value-${i}-${"k".repeat(24)}`);
await pair("redact 64 KiB tail with 12 secrets in all their forms ÷ one regex pass", () => redactSecrets(tail, storySecrets), regexBase);
const nearMissLine = "a.b-".repeat(250_000) + "x-access-token:".repeat(10_000) + "://a:".repeat(10_000);
await pair(
  "redact one 1.2 MB near-miss line ÷ one token-regex pass",
  () => redactSecrets(nearMissLine),
  () => nearMissLine.replace(/ghs_[A-Za-z0-9]{36}/g, "x"),
);

const at = "2026-01-01T00:00:00.000Z";
const events: HistoryEvent[] = [
  { at, kind: "run.started", storyId: "o/r#1", runId: "r", taskId: "t", title: "T", stages: ["verifier"], maxAttempts: 3, readmission: false },
  { at, kind: "gate.finished", taskId: "t", stage: "verifier", attempt: 1, command: "npm test", exitCode: 1, timedOut: false, outputTail: tail, durationMs: 5 },
];
const snapshot = events.reduce(reduceSnapshot, emptySnapshot());
const rendered = renderVerifierCheck(snapshot);
await pair(
  "render verifier check (64 KiB tail) ÷ JSON.stringify of it",
  () => renderVerifierCheck(snapshot),
  () => JSON.stringify(rendered),
);
