/**
 * The test-integrity gate: does the suite still test what it tested? Compares a change with
 * its base (test files, their cases, skips and assertions, the test command's configuration,
 * CI workflows, suppressions) and the tests the suite reports running, and says what weakened.
 * The core is pure (`judgeChange`); `readWorkChange` and `readLogCounts` are its readers.
 */
export { FINDING_KINDS, type FileChange, type Finding, type FindingKind } from "./change.js";
export { compareRunCounts, readRunCounts, RUNNERS, type CountComparison, type RunCounts, type Runner } from "./counts.js";
export { readCommitChange, readWorkChange, gateReads, DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_TOTAL_BYTES, type ReadChangeOptions } from "./git-change.js";
export { judgeChange, CONFIG_ACCEPTANCE, type AcceptedFinding, type IntegrityPolicy, type IntegrityVerdict } from "./judge.js";
export { isTestPath, languageOf, type Language } from "./paths.js";
export { readLogCounts, MAX_LOG_BYTES } from "./run-log.js";
