/**
 * A seat's whole conversation, kept: the preset CLIs print it as JSON lines on stdout (Claude
 * Code's `--output-format stream-json --verbose`, Codex's `exec --json`), which land in the
 * agent's log as they arrive. After the seat, the log is split: the events go to
 * `transcript.jsonl` (each line redacted, bounded), and `agent.log` keeps what a person reads —
 * the CLI's own non-JSON lines (its stderr) and the final answer. The usage (turns, tokens) is
 * read from the events on the way.
 */
import { createReadStream, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { createInterface } from "node:readline";

/** The event formats the preset CLIs print. */
export type TranscriptFormat = "claude-stream-json" | "codex-json";

/** What a seat spent, read from its transcript. */
export interface SeatUsage {
  /** Model turns (Claude Code's `num_turns`; Codex's tool calls and messages). */
  turns: number;
  inputTokens: number;
  outputTokens: number;
  /** Lines of the stream that were not JSON (kept in the transcript as such, counted). */
  badLines: number;
}

/** The most bytes of one transcript line; a longer event is kept as its head, marked cut. */
export const MAX_TRANSCRIPT_LINE_BYTES = 64 * 1024;
/** The most bytes of a whole transcript; later lines are counted, not kept. */
export const MAX_TRANSCRIPT_BYTES = 16 * 1024 * 1024;
/** The most characters of the final answer written to `agent.log`. */
const MAX_ANSWER_CHARS = 64 * 1024;
/** A log up to this size is split in one go; a longer one is streamed line by line. */
const WHOLE_READ_BYTES = 1024 * 1024;
/** Kept lines are written in batches of about this many bytes, not one write each. */
const WRITE_BATCH_BYTES = 256 * 1024;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function redactJson(value: Json, redact: (text: string) => string): Json {
  if (typeof value === "string") return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactJson(item, redact));
  if (value !== null && typeof value === "object") {
    const out: { [key: string]: Json } = {};
    for (const [key, item] of Object.entries(value)) out[redact(key)] = redactJson(item, redact);
    return out;
  }
  return value;
}

const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0);
const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** Reads usage and the final answer from one event, event by event. */
class UsageReader {
  readonly usage: SeatUsage = { turns: 0, inputTokens: 0, outputTokens: 0, badLines: 0 };
  answer: string | undefined;
  private readonly claudeMessages = new Map<string, { input: number; output: number }>();
  private claudeResult: Record<string, unknown> | undefined;

  constructor(private readonly format: TranscriptFormat) {}

  read(event: Record<string, unknown>): void {
    if (this.format === "claude-stream-json") this.readClaude(event);
    else this.readCodex(event);
  }

  private readClaude(event: Record<string, unknown>): void {
    if (event.type === "result") {
      this.claudeResult = event;
      if (typeof event.result === "string") this.answer = event.result;
      return;
    }
    if (event.type !== "assistant") return;
    // One model message may arrive as several events (a block each), repeating its usage: the last one counts.
    const message = record(event.message);
    const usage = record(message.usage);
    const id = typeof message.id === "string" ? message.id : `event-${this.claudeMessages.size}`;
    this.claudeMessages.set(id, { input: inputOf(usage), output: num(usage.output_tokens) });
  }

  private readCodex(event: Record<string, unknown>): void {
    if (event.type === "turn.completed") {
      const usage = record(event.usage);
      this.usage.inputTokens += num(usage.input_tokens);
      this.usage.outputTokens += num(usage.output_tokens);
      return;
    }
    if (event.type === "item.completed") {
      const item = record(event.item);
      if (item.type === "reasoning") return;
      this.usage.turns += 1;
      if (item.type === "agent_message" && typeof item.text === "string") this.answer = item.text;
      return;
    }
    // A failure ends the run without a message: its words are the answer a person needs.
    if (event.type === "turn.failed") {
      const message = record(event.error).message;
      if (typeof message === "string") this.answer = message;
    } else if (event.type === "error" && typeof event.message === "string") this.answer = event.message;
  }

  /** The usage, final: Claude Code's result event when it came, else the messages seen. */
  finish(): SeatUsage {
    if (this.format !== "claude-stream-json") return this.usage;
    const result = this.claudeResult;
    if (result !== undefined) {
      const usage = record(result.usage);
      return { ...this.usage, turns: num(result.num_turns), inputTokens: inputOf(usage), outputTokens: num(usage.output_tokens) };
    }
    const messages = [...this.claudeMessages.values()];
    return {
      ...this.usage,
      turns: messages.length,
      inputTokens: messages.reduce((sum, message) => sum + message.input, 0),
      outputTokens: messages.reduce((sum, message) => sum + message.output, 0),
    };
  }
}

/** Anthropic counts cached input apart; all of it was sent. */
function inputOf(usage: Record<string, unknown>): number {
  return num(usage.input_tokens) + num(usage.cache_creation_input_tokens) + num(usage.cache_read_input_tokens);
}

function parseLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Every string of `value`, keys included, appended to `into`. */
function stringsOf(value: Json, into: string[]): string[] {
  if (typeof value === "string") into.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, into);
  else if (value !== null && typeof value === "object")
    for (const [key, item] of Object.entries(value)) {
      into.push(key);
      stringsOf(item, into);
    }
  return into;
}

/**
 * A line as kept: the event redacted, or its redacted head when it is too long, within the line
 * bound. Most events hold nothing to hide: their strings are redacted at once, joined by line
 * breaks, and only an event whose joined strings change is redacted string by string (a
 * Claude Code seat's init event alone holds thousands of strings, each a call of `redact`).
 */
function keptLine(event: Record<string, unknown>, redact: (text: string) => string): string {
  const strings = stringsOf(event as Json, []).join("\n");
  const line = JSON.stringify(redact(strings) === strings ? event : redactJson(event as Json, redact));
  if (Buffer.byteLength(line) <= MAX_TRANSCRIPT_LINE_BYTES) return line;
  const head = Buffer.from(line)
    .subarray(0, MAX_TRANSCRIPT_LINE_BYTES / 2)
    .toString("utf8");
  return JSON.stringify({ type: "harness.cut", bytes: Buffer.byteLength(line), head });
}

/**
 * The split of one log, line by line: each event redacted into the transcript (bounded), the
 * CLI's other lines into both files, the usage and the final answer read on the way. What is
 * kept waits in `transcript` and `log` until the caller writes it.
 */
class Splitter {
  readonly reader: UsageReader;
  private transcript: string[] = [];
  private log: string[] = [];
  /** Characters waiting in `transcript` and `log`. */
  pending = 0;
  private written = 0;
  private dropped = 0;

  constructor(
    format: TranscriptFormat,
    private readonly redact: (text: string) => string,
  ) {
    this.reader = new UsageReader(format);
  }

  line(line: string): void {
    if (line.trim() === "") return;
    const event = parseLine(line);
    if (event !== undefined) {
      this.reader.read(event);
      this.keep(keptLine(event, this.redact));
      return;
    }
    this.reader.usage.badLines += 1;
    const text = this.redact(line.length > MAX_TRANSCRIPT_LINE_BYTES / 2 ? `${line.slice(0, MAX_TRANSCRIPT_LINE_BYTES / 2)}…` : line);
    this.keep(JSON.stringify({ type: "harness.not_json", line: text }));
    this.toLog(`${text}\n`);
  }

  /** After the last line: the mark of lines left out, and the final answer. */
  end(): void {
    if (this.dropped > 0) this.transcript.push(`${JSON.stringify({ type: "harness.cut", droppedLines: this.dropped, maxBytes: MAX_TRANSCRIPT_BYTES })}\n`);
    if (this.reader.answer !== undefined) this.toLog(`${this.redact(this.reader.answer.slice(0, MAX_ANSWER_CHARS))}\n`);
  }

  /** The waiting text of each file, taken. */
  take(): { transcript: string; log: string } {
    const taken = { transcript: this.transcript.join(""), log: this.log.join("") };
    this.transcript = [];
    this.log = [];
    this.pending = 0;
    return taken;
  }

  private keep(line: string): void {
    const bytes = Buffer.byteLength(line) + 1;
    if (this.written + bytes > MAX_TRANSCRIPT_BYTES) {
      this.dropped += 1;
      return;
    }
    this.written += bytes;
    this.transcript.push(`${line}\n`);
    this.pending += line.length + 1;
  }

  private toLog(text: string): void {
    this.log.push(text);
    this.pending += text.length;
  }
}

/**
 * Splits the agent's log at `logPath` (the CLI's stream of `format` events and its stderr) into
 * `transcriptPath` and a new `agent.log` of the CLI's other lines and its final answer. Every
 * text passes through `redact`, which must change a text wherever it holds something to hide,
 * as a line of a longer text too (the App's and the agent's redactors replace values and
 * patterns where they occur): an event is first redacted as its strings joined. A line that is
 * not JSON is kept (in both) and counted; the split never throws on what the agent printed.
 * Returns the usage the events reported.
 */
export async function splitTranscript(logPath: string, transcriptPath: string, format: TranscriptFormat, redact: (text: string) => string): Promise<SeatUsage> {
  const raw = `${logPath}.raw`;
  const splitter = new Splitter(format, redact);
  // A small log (nearly every seat's) is split in one go and synchronously, a few milliseconds of
  // the loop: asynchronous file calls would wait behind the thread pool, which the step's scratch
  // removal fills as the seat ends (a rename took 10-30 ms there, bench/agents).
  renameSync(logPath, raw);
  try {
    if (statSync(raw).size <= WHOLE_READ_BYTES) {
      for (const line of readFileSync(raw, "utf8").split(/\r?\n|\r/)) splitter.line(line);
      splitter.end();
      const { transcript, log } = splitter.take();
      writeFileSync(transcriptPath, transcript, { mode: 0o600 });
      writeFileSync(logPath, log, { mode: 0o600 });
    } else await splitStreamed(raw, logPath, transcriptPath, splitter);
  } finally {
    rmSync(raw, { force: true });
  }
  return splitter.reader.finish();
}

/** A log too long to read whole: streamed line by line, what is kept written in batches. */
async function splitStreamed(raw: string, logPath: string, transcriptPath: string, splitter: Splitter): Promise<void> {
  const transcriptFile = await open(transcriptPath, "w", 0o600);
  const logFile = await open(logPath, "w", 0o600);
  const write = async (): Promise<void> => {
    const { transcript, log } = splitter.take();
    if (transcript !== "") await transcriptFile.write(transcript);
    if (log !== "") await logFile.write(log);
  };
  try {
    for await (const line of createInterface({ input: createReadStream(raw, { encoding: "utf8" }), crlfDelay: Infinity })) {
      splitter.line(line);
      if (splitter.pending >= WRITE_BATCH_BYTES) await write();
    }
    splitter.end();
    await write();
  } finally {
    await transcriptFile.close();
    await logFile.close();
  }
}
