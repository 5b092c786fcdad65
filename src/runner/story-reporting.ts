import { PendingReporter } from "./pending-reporter.js";
import type { StoryPull } from "./story-start.js";
import { TrackingReporter, type StoryReporter } from "./tracking-reporter.js";

export interface ReportingArgs {
  /** The story's pull request when it is known; undefined while its draft is being opened (`opening`). */
  pull: StoryPull | undefined;
  opening: Promise<StoryPull>;
  /** The story's reporter on its pull request. */
  makeReporter: (pull: StoryPull) => StoryReporter;
  /** The App's outbox is durable: reports are recorded on disk and delivered in the background. */
  durable: boolean;
  /** Announces on the issue that the story started in the pull request this run opened. */
  announce: (pull: StoryPull) => Promise<void>;
  /** Where a reporter's failure goes (it never stops the story). */
  onFailure: (error: unknown) => void;
}

export interface StoryReporting {
  /** What the pipeline reports to; it holds the story's end until the work is delivered. */
  tracker: TrackingReporter;
  /** Set while the reporter waits for the draft pull request being opened. */
  pending: PendingReporter | undefined;
  /** The announcement, once the first event started it. */
  announcing(): Promise<void> | undefined;
}

/**
 * The story's reporting as a run starts it. The reporter is made on the pull request, or waits
 * for the draft being opened (a new story's worktree and provisioning need not wait for GitHub).
 * With the App's durable outbox it hands off at once: the pipeline never waits for GitHub to take
 * a check run (under GitHub.com's pacing, one write a second, that wait was seconds per stage).
 * A pull request this run opened is announced after the first event's reports, so that under
 * that pacing the check run comes first.
 */
export async function startReporting(args: ReportingArgs): Promise<StoryReporting> {
  const made = async (pull: StoryPull): Promise<StoryReporter> => {
    const reporter = args.makeReporter(pull);
    if (args.durable) await reporter.handOff();
    return reporter;
  };
  let pending: PendingReporter | undefined;
  const inner = args.pull ? await made(args.pull) : (pending = new PendingReporter(args.opening.then(made)));
  const tracker = new TrackingReporter(inner, args.onFailure, true);
  let announcing: Promise<void> | undefined;
  const waiting = pending;
  if (waiting) {
    // A new story's draft is the pull request this run opens: announced once it is there.
    tracker.afterFirstEvent = () => {
      announcing = waiting.settled().then(
        () => args.opening.then(args.announce),
        () => undefined,
      );
    };
  } else if (args.pull?.opened) {
    const opened = args.pull;
    tracker.afterFirstEvent = () => {
      announcing = args.announce(opened);
    };
  }
  return { tracker, pending, announcing: () => announcing };
}
