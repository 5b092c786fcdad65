/** The failure vocabulary: the one list of failure classes and the one place an error becomes one. */
export { FAILURE_CLASSES, type FailureClass } from "./classes.js";
export { failureClassOf, isFailureClass } from "./failure-class.js";
