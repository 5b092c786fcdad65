import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { schemas, SchemaValidationError } from "../schema/index.js";
import type { HistoryEvent } from "./events.js";

/** File name of the journal inside a run directory. */
export const JOURNAL_FILE = "execution-history.ndjson";

/**
 * The run's execution history: one JSON object per line, each validated against
 * `schemas/execution-history.schema.json` before it is written, so the file never holds a
 * line a reader cannot trust. Lines are appended synchronously to keep their order.
 */
export class Journal {
  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
  }

  /** Validates and appends one event; an invalid event is a harness bug and throws. */
  append(event: HistoryEvent): void {
    // Round-trip first: what is validated is exactly what a reader will parse.
    const line = JSON.stringify(event);
    schemas().validate("execution-history", JSON.parse(line), `${this.path} (event ${event.kind})`);
    appendFileSync(this.path, `${line}\n`);
  }
}

/** Reads a journal back, validating every line; errors name the file and the line number. */
export function readJournal(path: string): HistoryEvent[] {
  const lines = readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "");
  return lines.map((line, index) => {
    const source = `${path}:${index + 1}`;
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch {
      throw new SchemaValidationError(source, "execution-history", [{ path: "$", message: "is not JSON" }]);
    }
    return schemas().validate<HistoryEvent>("execution-history", data, source);
  });
}
