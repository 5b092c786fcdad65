export { createStoryRunner, type StoryRunnerDeps, type PipelinePort } from "./runner.js";
export type { RunnerLog } from "./log.js";
export { syncRepoCache, repoCacheDir, type RepoCacheArgs } from "./repo-cache.js";
export { ensureStoryPull, pushStoryBranch, type StoryPull } from "./story-start.js";
export { TrackingReporter, type StoryReporter } from "./tracking-reporter.js";
export { pushStoryResult, pushStoryWork, PushRefusedError, UNPUSHED_BUNDLE, type PushOutcome } from "./push.js";
export {
  housekeepingFromEnv,
  pruneRuns,
  lowDiskReason,
  HousekeepingSettingsError,
  DEFAULT_RETENTION_DAYS,
  DEFAULT_MIN_FREE_MB,
  type HousekeepingSettings,
} from "./housekeeping.js";
export { mergeDefaultBranch, BaseConflictError, baseConflictDetail, type BaseMergeResult } from "./base-merge.js";
