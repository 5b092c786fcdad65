/** The shape of `clean-clone-result.json` and its canonical key order. */

/** The shape of `clean-clone-result.json`; optional fields are absent, never null. */
export interface CleanCloneResult {
  ran: boolean;
  command: string;
  /** The interpreter the suite ran under: what the command invokes where that can be known, else the targeted one. */
  interpreter?: string;
  interpreterVersion?: string;
  exitCode?: number;
  outputTail?: string;
  /** Wall time of the whole check: construction, suite and cleanup of the clone. */
  durationMs: number;
  /** The check's commit: the target's working tree as `git add -A && git commit` would record it. */
  commit?: string;
  timedOut?: boolean;
  /** Why the check did not run (present exactly when `ran` is false). */
  reason?: string;
  /** Commits of history the clone held, when the check was asked for a shallow clone. */
  depth?: number;
  /** Dependency folders linked from the target into the clone. */
  linked?: string[];
  /** True when the clone was provisioned afresh instead of linked. */
  provisioned?: boolean;
  /** What a reader should know about the verdict (an interpreter that is not the targeted one). */
  warnings?: string[];
}

const KEY_ORDER: readonly (keyof CleanCloneResult)[] = [
  "ran",
  "command",
  "interpreter",
  "interpreterVersion",
  "exitCode",
  "outputTail",
  "durationMs",
  "commit",
  "timedOut",
  "reason",
  "depth",
  "linked",
  "provisioned",
  "warnings",
];

/** The result with its keys in the pinned order, no undefined values and no empty warnings. */
export function ordered(command: string, partial: Partial<CleanCloneResult>, durationMs: number): CleanCloneResult {
  const full: CleanCloneResult = { ...partial, ran: partial.ran ?? false, command, durationMs };
  if (full.warnings?.length === 0) delete full.warnings;
  const out: Record<string, unknown> = {};
  for (const key of KEY_ORDER) if (full[key] !== undefined) out[key] = full[key];
  return out as unknown as CleanCloneResult;
}
