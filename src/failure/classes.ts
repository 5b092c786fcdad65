/**
 * The failure vocabulary: ground every room stands on. It imports nothing, so any room may
 * import it without standing on the pipeline.
 */

/**
 * Every failure class, in one list: {@link FailureClass} is derived from it, the journal schema's
 * enum, the advice texts and the README's table are checked against it. Every error class's
 * `failureClass` is one of these.
 */
export const FAILURE_CLASSES = [
  "workspace-provision-failed",
  "retry-ceiling",
  "clean-clone-not-run",
  "clean-clone-failed",
  "suite-failed",
  "verdict-fail",
  "agent-exit",
  "agent-timeout",
  "artifact-missing",
  "artifact-invalid",
  "config-invalid",
  "interrupted",
  "internal-error",
  // Infrastructure and admission classes (blocked outside the attempt ladder unless noted).
  "environment",
  "baseline-red",
  "agent-unavailable",
  "budget-exhausted",
  "push-refused",
  "base-conflict",
  // Attempt failures of a task in a plan.
  "scope-violation",
  "blocked-by-dependency",
  // The suite was weakened (tests, skips, assertions, configuration, CI): blocks under its own name at the ceiling.
  "test-integrity",
  // Classes of the typed errors the rooms below the pipeline throw.
  "git-failed",
  "schema-invalid",
  "clean-clone-interpreter",
  "clean-clone-build-failed",
  "usage",
] as const;

/** Why a step failed or a story stopped; every blocked story names one. */
export type FailureClass = (typeof FAILURE_CLASSES)[number];
