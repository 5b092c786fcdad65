/** The one place a thrown error becomes a {@link FailureClass}. */
import { FAILURE_CLASSES, type FailureClass } from "./classes.js";

const MEMBERS: ReadonlySet<string> = new Set(FAILURE_CLASSES);

/** True when `value` is a member of the failure vocabulary. */
export function isFailureClass(value: unknown): value is FailureClass {
  return typeof value === "string" && MEMBERS.has(value);
}

/**
 * The failure class of a thrown value: a typed error's own `failureClass` when it is one of the
 * vocabulary, otherwise `internal-error` (an untyped error is the harness's own failure).
 */
export function failureClassOf(error: unknown): FailureClass {
  const own = typeof error === "object" && error !== null ? (error as { failureClass?: unknown }).failureClass : undefined;
  return isFailureClass(own) ? own : "internal-error";
}
