export { runCleanCloneCheck, DEFAULT_CLEAN_CLONE_TIMEOUT_MS, type CleanCloneOptions, type CleanCloneResult } from "./check.js";
export { CLEAN_CLONE_TAIL_LINES, CLEAN_CLONE_TAIL_BYTES } from "./run-suite.js";
export { buildCleanClone, type BuildCleanCloneOptions, type BuiltCleanClone } from "./build.js";
export { CLEAN_CLONE_STEP_TIMEOUT_MS } from "./limits.js";
export { CleanCloneBuildError, CleanCloneOptionsError, CLEAN_CLONE_DETAIL_BYTES, type CleanCloneBuildStep } from "./errors.js";
export { DEFAULT_CLEAN_CLONE_LINKS, validateLinkName } from "./links.js";
export { InterpreterError } from "./interpreter.js";
export { writeCleanCloneResult, cleanCloneExitCode, cleanClonePassed, CLEAN_CLONE_RESULT_FILE } from "./result.js";
export { userGitSettings, type UserGitSettings } from "./user-config.js";
