import type { RunnerLog } from "../../src/runner/index.js";

/** A runner log that keeps every line (`<level> <message> <details>`) for the test to read. */
export function recordingLog(): { lines: string[]; log: RunnerLog } {
  const lines: string[] = [];
  const record = (level: string) => (details: object, message?: string) => {
    lines.push(`${level} ${message} ${JSON.stringify(details)}`);
  };
  return { lines, log: { info: record("info"), warn: record("warn"), error: record("error") } };
}
