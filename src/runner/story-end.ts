/**
 * How a story's end is reported when the pipeline did not report it: the runner's `finally`.
 * A story stopped before the pipeline gets its `run.started` first, so the check runs and
 * the status comment have a story to show.
 */
import { randomUUID } from "node:crypto";
import { renderStoryStopped } from "../github/report/index.js";
import { failureClassOf, runStartedEvent, type FailureClass, type RunStartedEvent, type Workflow } from "../pipeline/index.js";
import type { JobLease, StoryJob } from "../queue/index.js";
import type { RunnerLog } from "./log.js";
import type { TrackingReporter } from "./tracking-reporter.js";
import { storyKey } from "../story-key/index.js";

function startEvent(job: StoryJob, workflow: Workflow, readmission: boolean): RunStartedEvent {
  return {
    ...runStartedEvent({
      story: { id: storyKey(job.repository.owner, job.repository.name, job.issue.number), title: job.issue.title },
      runId: randomUUID(),
      workflow,
      readmission,
    }),
    at: new Date().toISOString(),
  };
}

export interface EndArgs {
  log: RunnerLog;
  /** The workflow, for the `run.started` of a story stopped before the pipeline (none when it cannot be loaded). */
  loadWorkflow: () => Workflow;
  job: StoryJob;
  lease: JobLease;
  tracker: TrackingReporter | undefined;
  failure: unknown;
  redact: (text: string) => string;
  /** Comments on the story's issue (through the outbox); absent before the App could authenticate. */
  tell: ((body: string) => Promise<void>) | undefined;
  interrupted: boolean;
}

/**
 * The runner's `finally`: a story whose end the pipeline did not report is reported blocked
 * here, through the reporter when there is one, else as a comment on the issue, else in the
 * log. Never throws: reporting itself may fail.
 */
export async function reportEnd(args: EndArgs): Promise<void> {
  const { log, job, tracker, failure, redact } = args;
  if (args.interrupted && !tracker?.ended) {
    // The App is stopping: the job stays queued on disk and resumes on the next start.
    log.warn({ story: job.storyKey }, "story interrupted by shutdown; it resumes on the next start");
    return;
  }
  if (failure === undefined && tracker?.ended) return;
  const failureClass: FailureClass = failureClassOf(failure);
  const detail = redact(failure === undefined ? "The pipeline ended without reporting an outcome." : describe(failure, redact).message);
  log.error({ story: job.storyKey, failureClass, err: { message: detail } }, "story stopped");
  try {
    if (tracker && !tracker.ended) {
      const workflow = safeWorkflow(args.loadWorkflow);
      await tracker.block({ failureClass, detail, ...(workflow ? { start: startEvent(job, workflow, args.lease.interruptions > 0) } : {}) });
      return;
    }
    // No reporter yet (the story never started), or the story's end was reported but what
    // followed failed (pushing the result, marking the pull request ready): say so on the issue.
    if (args.tell) await args.tell(renderStoryStopped(tracker ? "finished, but its result could not be delivered" : "could not start", failureClass, detail));
  } catch (error) {
    log.error({ story: job.storyKey, err: describe(error, redact) }, "reporting the story's end failed");
  }
}

function safeWorkflow(loadWorkflow: () => Workflow): Workflow | undefined {
  try {
    return loadWorkflow();
  } catch {
    return undefined;
  }
}

/** An error as the runner logs it: its message, redacted, and GitHub's HTTP status when it has one. */
export function describe(error: unknown, redact: (text: string) => string): { message: string; status?: number } {
  const message = redact(error instanceof Error ? error.message : String(error));
  const status = error instanceof Error ? (error as { status?: unknown }).status : undefined;
  return typeof status === "number" ? { message, status } : { message };
}
