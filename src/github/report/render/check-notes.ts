/** What a check run says when the App closes it for a reason of its own, not the story's. */
import type { CheckRunOutput } from "./types.js";

/** A check run on a head the story left: its work was pushed as `sha`, where the check continues. */
export function renderMovedCheck(sha: string): CheckRunOutput {
  return { title: "Moved to the pushed commit", summary: `The story pushed its work as ${sha}; this check continues on that commit.` };
}

/** A check run left unfinished by an App that stopped, closed when the outbox finds it. */
export function renderInterruptedCheck(): CheckRunOutput {
  return {
    title: "Interrupted",
    summary: "The App stopped (a crash or a restart) while this check ran. Its story is resumed in a new run, whose check runs replace this one.",
  };
}
