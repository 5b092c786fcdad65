/** The `harness:blocked` label on a blocked story's issue and pull request. */
import type { ProbotOctokit } from "probot";
import { hasStatus } from "./log.js";

export const BLOCKED_LABEL = "harness:blocked";
const BLOCKED_COLOR = "b60205";
const BLOCKED_DESCRIPTION = "story-harness: blocked; comment /harness retry-blocked to re-admit";

/** True when a label list (as webhooks carry it) contains `name`. */
export function hasLabel(labels: ReadonlyArray<{ name?: string } | string> | undefined, name: string): boolean {
  return (labels ?? []).some((label) => (typeof label === "string" ? label : label.name) === name);
}

/** Creates the label unless it exists; a concurrent creation (422) counts as existing. */
export async function ensureLabel(octokit: ProbotOctokit, owner: string, repo: string, name: string = BLOCKED_LABEL): Promise<void> {
  try {
    await octokit.rest.issues.getLabel({ owner, repo, name });
    return;
  } catch (error) {
    if (!hasStatus(error, 404)) throw error;
  }
  try {
    await octokit.rest.issues.createLabel({ owner, repo, name, color: BLOCKED_COLOR, description: BLOCKED_DESCRIPTION });
  } catch (error) {
    if (!hasStatus(error, 422)) throw error;
  }
}

/** Adds `name` to each issue or pull request number, creating the label first if missing. */
export async function addLabel(octokit: ProbotOctokit, owner: string, repo: string, numbers: readonly number[], name: string = BLOCKED_LABEL): Promise<void> {
  await ensureLabel(octokit, owner, repo, name);
  for (const issue_number of new Set(numbers)) await octokit.rest.issues.addLabels({ owner, repo, issue_number, labels: [name] });
}

/** Removes `name` from each issue or pull request number; absent labels are fine. */
export async function removeLabel(
  octokit: ProbotOctokit,
  owner: string,
  repo: string,
  numbers: readonly number[],
  name: string = BLOCKED_LABEL,
): Promise<void> {
  for (const issue_number of new Set(numbers)) {
    try {
      await octokit.rest.issues.removeLabel({ owner, repo, issue_number, name });
    } catch (error) {
      if (!hasStatus(error, 404)) throw error;
    }
  }
}
