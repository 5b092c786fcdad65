/**
 * Writes `schemas/execution-history.schema.json` from the journal's one source,
 * `src/pipeline/event-schemas.ts` (`npm run schemas:journal`). With `--check` it writes nothing
 * and exits 1 when the committed file differs from what the source generates.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { executionHistorySchemaText } from "../src/pipeline/event-schemas.js";

const file = fileURLToPath(new URL("../schemas/execution-history.schema.json", import.meta.url));
const text = executionHistorySchemaText();
if (process.argv.includes("--check")) {
  if (readFileSync(file, "utf8") !== text) {
    process.stderr.write("schemas/execution-history.schema.json differs from src/pipeline/event-schemas.ts: run `npm run schemas:journal`\n");
    process.exit(1);
  }
} else {
  writeFileSync(file, text);
}
