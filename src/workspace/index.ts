export {
  git,
  gitBytes,
  gitResult,
  splitNul,
  isWorkTree,
  GitError,
  GIT_HARDENING,
  GIT_ENV,
  DIFF_HARDENING,
  HARNESS_IDENTITY,
  type GitOptions,
  type GitFailureKind,
} from "./git.js";
export {
  runCleanCloneCheck,
  DEFAULT_CLEAN_CLONE_TIMEOUT_MS,
  CLEAN_CLONE_TAIL_LINES,
  CLEAN_CLONE_TAIL_BYTES,
  buildCleanClone,
  CLEAN_CLONE_STEP_TIMEOUT_MS,
  CleanCloneBuildError,
  CleanCloneOptionsError,
  DEFAULT_CLEAN_CLONE_LINKS,
  validateLinkName,
  InterpreterError,
  writeCleanCloneResult,
  cleanCloneExitCode,
  CLEAN_CLONE_RESULT_FILE,
  type CleanCloneOptions,
  type CleanCloneResult,
  type BuildCleanCloneOptions,
  type BuiltCleanClone,
  type CleanCloneBuildStep,
} from "./clean-clone/index.js";
export { harnessHome, cacheDir, logsDir, type CacheTool } from "./paths.js";
export {
  provisionWorktree,
  assertProvisioned,
  provisionCacheEnv,
  type ProvisionArgs,
  type ProvisionOutcome,
} from "./provision.js";
export {
  DEFAULT_PROVISION_TIMEOUT_MS,
  validateProvisionConfig,
  ProvisionConfigError,
  type ProvisionConfig,
  type ProvisionSettings,
} from "./provision-config.js";
export { resolveProvisionCommand, PROVISION_HOOK, type ProvisionSource, type ResolvedProvision } from "./provision-resolve.js";
export { snapshotsDir, SNAPSHOTS_KEPT } from "./provision-snapshot.js";
export {
  PROVISION_RECEIPT,
  provisionReceiptPath,
  readReceipt,
  isProvisioned,
  writeReceipt,
  excludeReceipt,
  type ProvisionReceipt,
} from "./provision-receipt.js";
export { WorkspaceProvisionError, type ProvisionFailure } from "./provision-error.js";
export {
  createTaskWorktree,
  removeTaskWorktree,
  taskWorktreePath,
  pathComponent,
  storyDirName,
  WorktreeError,
  type TaskWorktree,
  type CreateTaskWorktreeArgs,
} from "./worktree.js";
export { repositoryLocks, RepoLocks } from "./repo-lock.js";
export { writeFileAtomic, writeFileAtomicSync, flushPendingWrites, syncDir, type AtomicWriteOptions } from "./atomic-file.js";
export { reapScratch } from "./clean-clone/scratch.js";
