export { createStoryRunner, type StoryRunnerDeps, type PipelinePort, type ReporterTarget, type RunnerLog } from "./runner.js";
export { authenticateInstallation, type AppOctokit, type Installation } from "./token.js";
export { gitAuthEnv, redactToken, tokenForms } from "./git-auth.js";
export { syncRepoCache, repoCacheDir, type RepoCacheArgs } from "./repo-cache.js";
export { ensureStoryPull, announceStory, pushStoryBranch, markReadyForReview, pullTitle, type StoryPull } from "./story-start.js";
export { fetchHarnessConfigText, HARNESS_CONFIG_PATH } from "./repo-config.js";
export { TrackingReporter, type StoryReporter } from "./tracking-reporter.js";
export { housekeepingFromEnv, pruneRuns, lowDiskReason, HousekeepingSettingsError, DEFAULT_RETENTION_DAYS, DEFAULT_MIN_FREE_MB, type HousekeepingSettings } from "./housekeeping.js";
