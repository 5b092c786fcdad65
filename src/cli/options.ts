/**
 * Every option of every command, in one place: each command parses with its own entry, its
 * `--help` must list each of them (test/cli/help-options.test.ts), and an unknown option is
 * answered with the nearest known one. One naming across commands: the suite's command is
 * `--test-cmd` and provisioning's `--provision-cmd`; the older spellings (`--command` of
 * clean-clone, `--cmd` of provision) are still read.
 */
import type { ParseArgsConfig } from "node:util";

type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig["options"]>;

export const COMMAND_OPTIONS = {
  run: {
    story: { type: "string" },
    agent: { type: "string" },
    "agent-cmd": { type: "string" },
    workflow: { type: "string" },
    "test-cmd": { type: "string" },
    continue: { type: "boolean" },
    fresh: { type: "boolean" },
    concurrency: { type: "string" },
    "accept-integrity": { type: "boolean" },
  },
  "clean-clone": {
    "test-cmd": { type: "string" },
    command: { type: "string" },
    link: { type: "string", multiple: true },
    "no-link": { type: "boolean" },
    interpreter: { type: "string" },
    "timeout-ms": { type: "string" },
    out: { type: "string" },
    depth: { type: "string" },
    env: { type: "string", multiple: true },
    provision: { type: "boolean" },
    "allow-external-symlinks": { type: "boolean" },
    json: { type: "boolean" },
  },
  provision: { "provision-cmd": { type: "string" }, cmd: { type: "string" }, "timeout-ms": { type: "string" }, log: { type: "string" } },
  validate: { workflow: { type: "string" } },
  status: { json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
  worker: { help: { type: "boolean", short: "h" } },
  serve: {},
  demo: {},
} as const satisfies Record<string, ParseArgsOptionsConfig>;

/** Edit distance of two short words (options and command names). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] ?? Number.MAX_SAFE_INTEGER;
}

/** The known word nearest to `word`, when one is close enough to be what was meant. */
export function nearest(word: string, known: readonly string[]): string | undefined {
  let best: { word: string; score: number } | undefined;
  for (const candidate of known) {
    const score = distance(word, candidate);
    if (score <= Math.max(2, Math.floor(candidate.length / 3)) && (best === undefined || score < best.score)) best = { word: candidate, score };
  }
  return best?.word;
}

/** " (did you mean --x?)" for an unknown option of `command` named in parseArgs's message, or "". */
export function optionHint(command: string, message: string): string {
  const options = (COMMAND_OPTIONS as Record<string, ParseArgsOptionsConfig>)[command];
  const unknown = /Unknown option '--([^']+)'/.exec(message)?.[1];
  if (options === undefined || unknown === undefined) return "";
  const guess = nearest(unknown, Object.keys(options));
  return guess !== undefined ? ` (did you mean --${guess}?)` : "";
}
