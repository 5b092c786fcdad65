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
 * Figures are medians of repeated runs (the parse variants interleaved), reported as ratios.
 *
 * Run: node --import tsx bench/github-text.ts [--reps 15]
 */
import { parseArgs } from "node:util";
import { parseCommands, redactSecrets, renderVerifierCheck } from "../src/github/index.js";
import { emptySnapshot, reduceSnapshot, type HistoryEvent } from "../src/pipeline/events.js";

const { values } = parseArgs({ options: { reps: { type: "string", default: "15" } } });
const REPS = Number(values.reps);

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function time1(work: () => unknown): number {
  const start = process.hrtime.bigint();
  work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function time(work: () => unknown): number {
  const samples: number[] = [];
  for (let rep = 0; rep < REPS; rep += 1) {
    const start = process.hrtime.bigint();
    work();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(samples);
}

const NEAR_MISSES = ["/harnes retry-blocked", " /harness-x", "> /harness retry-blocked", "```", "    /harness help", "<!-- -->", "text with /harness retry-blocked inside", "~~~", "```", "a `<details>` b", "<pre>x</pre>", "cell | /harness help"];
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
time(() => parseCommands(one, unbounded)); // warm-up
// Interleaved, so load from other processes weighs on every measured variant alike.
const samples = { one: [] as number[], two: [] as number[], base: [] as number[] };
for (let rep = 0; rep < REPS; rep += 1) {
  samples.one.push(time1(() => parseCommands(one, unbounded)));
  samples.two.push(time1(() => parseCommands(two, unbounded)));
  samples.base.push(time1(() => baselineScan(one)));
}
// Text that never closes (a comment, a fence, a quote) and one 1 MiB line: 80,000 lines against 40,000.
const openers = ["<!--\n", "```\n", "> quote\n"];
const unclosed = (opener: string, lines: number): string => `${opener}${"/harness retry-blocked\n".repeat(lines)}`;
const unclosedRatios = openers.map((opener) => {
  const [small, large] = [unclosed(opener, 40_000), unclosed(opener, 80_000)];
  parseCommands(large, unbounded); // warm-up
  const pair = { small: [] as number[], large: [] as number[] };
  for (let rep = 0; rep < REPS; rep += 1) {
    pair.small.push(time1(() => parseCommands(small, unbounded)));
    pair.large.push(time1(() => parseCommands(large, unbounded)));
  }
  return { opener: opener.trim(), ratio: median(pair.large) / median(pair.small) };
});
const oneLine = "/harnes ".repeat(1 << 17);
const oneLineSamples = { parse: [] as number[], base: [] as number[] };
for (let rep = 0; rep < REPS; rep += 1) {
  oneLineSamples.parse.push(time1(() => parseCommands(oneLine, unbounded)));
  oneLineSamples.base.push(time1(() => baselineScan(oneLine)));
}

const parseOne = median(samples.one);
const parseTwo = median(samples.two);
const baseOne = median(samples.base);

const tail = `${"npm ERR! 错误 ✗ at https://x-access-token:ghs_abcdefghijklmnopqrstuv@host/r.git\n".repeat(700)}`.slice(0, 64 * 1024);
const redactTime = time(() => redactSecrets(tail, ["a-secret-value"]));
const nearMissLine = "a.b-".repeat(250_000) + "x-access-token:".repeat(10_000) + "://a:".repeat(10_000);
const redactLine = time(() => redactSecrets(nearMissLine));
const redactLineBase = time(() => nearMissLine.replace(/ghs_[A-Za-z0-9]{36}/g, "x"));
const regexBase = time(() => tail.replace(/ghs_/g, "x"));
// What the reporter redacts with in a story: a few tokens, the webhook secret, the private key's lines (every form of each).
const storySecrets = Array.from({ length: 12 }, (_, i) => `secret-value-${i}-${"k".repeat(24)}`);
const redactStory = time(() => redactSecrets(tail, storySecrets));

const at = "2026-01-01T00:00:00.000Z";
const events: HistoryEvent[] = [
  { at, kind: "run.started", storyId: "o/r#1", runId: "r", taskId: "t", title: "T", stages: ["verifier"], maxAttempts: 3, readmission: false },
  { at, kind: "gate.finished", taskId: "t", stage: "verifier", attempt: 1, command: "npm test", exitCode: 1, timedOut: false, outputTail: tail, durationMs: 5 },
];
const snapshot = events.reduce(reduceSnapshot, emptySnapshot());
const rendered = renderVerifierCheck(snapshot);
const renderTime = time(() => renderVerifierCheck(snapshot));
const stringifyBase = time(() => JSON.stringify(rendered));

const fmt = (ms: number): string => `${ms.toFixed(2)} ms`;
console.log(`parse 1 MiB: ${fmt(parseOne)}  baseline split+startsWith: ${fmt(baseOne)}  ratio ${(parseOne / baseOne).toFixed(2)}x`);
console.log(`parse 2 MiB / 1 MiB: ${(parseTwo / parseOne).toFixed(2)}x (linear = 2.00x)`);
console.log(`redact 64 KiB tail: ${fmt(redactTime)}  baseline one regex pass: ${fmt(regexBase)}  ratio ${(redactTime / regexBase).toFixed(2)}x`);
console.log(`redact 64 KiB tail with 12 secrets in all their forms: ${fmt(redactStory)}  baseline one regex pass: ${fmt(regexBase)}  ratio ${(redactStory / regexBase).toFixed(2)}x`);
console.log(`render verifier check (64 KiB tail): ${fmt(renderTime)}  baseline JSON.stringify of it: ${fmt(stringifyBase)}  ratio ${(renderTime / stringifyBase).toFixed(2)}x`);
for (const { opener, ratio } of unclosedRatios) console.log(`parse unclosed ${opener} 80k / 40k lines: ${ratio.toFixed(2)}x (linear = 2.00x)`);
console.log(`parse one 1 MiB line: ${fmt(median(oneLineSamples.parse))}  baseline split+startsWith: ${fmt(median(oneLineSamples.base))}  ratio ${(median(oneLineSamples.parse) / median(oneLineSamples.base)).toFixed(2)}x`);
console.log(`redact one 1.2 MB near-miss line: ${fmt(redactLine)}  baseline one token-regex pass: ${fmt(redactLineBase)}  ratio ${(redactLine / redactLineBase).toFixed(2)}x`);
