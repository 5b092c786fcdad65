export * from "./events.js";
export { failureClassOf, isFailureClass } from "../failure/index.js";
export { runStartedEvent, type RunStartedEvent } from "./run-started.js";
export { runStory } from "./coordinator.js";
export { TaskSlots, inSlots, type SlotLease } from "./task-slots.js";
export type { StoryInput, RunStoryArgs, StoryOutcome } from "./types.js";
export { loadWorkflow, declaredChecks, DEFAULT_WORKFLOW_PATH, HARNESS_ROOT, type Workflow, type Stage, type ArtifactSpec } from "./workflow.js";
export {
  parseHarnessConfig,
  assertAgentEnvAllowed,
  withOverrides,
  DEFAULT_HARNESS_CONFIG,
  DEFAULT_ITERATE,
  type IterateConfig,
  type HarnessConfig,
  type SeatOverride,
  type ConfigOverrides,
} from "./config.js";
export { checkRunnable } from "./runnable.js";
export { WorkflowError, ConfigError } from "./errors.js";
export { renderPrompt, parseTemplate, placeholderValues, PLACEHOLDERS, type PromptContext, type RetryEvidence, type SuiteEvidence } from "./context.js";
export { Journal, readJournal, JOURNAL_FILE } from "./journal.js";
export { runDirectory } from "./run-dir.js";
export { consoleReporter, consoleLine, formatDuration } from "./console-reporter.js";
export { storyCommitMessage } from "./commit.js";
export { mergeCommit, type MergeResult } from "./merge.js";
export { defaultDeps, type PipelineDeps } from "./deps.js";
export {
  preflight,
  assertPreflight,
  PreflightError,
  nearestName,
  didYouMean,
  findOnPath,
  type PreflightInput,
  type PreflightProblem,
  type StoryBase,
} from "./preflight/index.js";
export { type RevisionPrompt } from "./context.js";
export { REVISER_PROMPT_PATH } from "./coordinator.js";
export { pruneCachedBaselines } from "./baseline-cache.js";
