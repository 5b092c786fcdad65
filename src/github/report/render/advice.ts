/** What a maintainer can do about each failure class of a blocked story. */
import type { FailureClass } from "../../../pipeline/index.js";

const ADVICE: Record<FailureClass, string> = {
  "workspace-provision-failed":
    "Dependencies could not be installed in a fresh worktree. Fix the install (lock file, `provision.command` in `.github/harness.yml`, or `.harness/provision.sh`) on the default branch, then retry.",
  "retry-ceiling":
    "Every attempt was sent back. Read the last attempt's verifier and clean-clone output, clarify the issue or raise `max_attempts`, then retry.",
  "clean-clone-not-run": "The suite could not be run in a fresh clone. Check `test.command` and `clean_clone` in `.github/harness.yml`, then retry.",
  "clean-clone-failed":
    "The suite passes in the working tree but fails in a fresh clone with the change committed. Look for files kept out by `.gitignore` or tests that read git state, then retry.",
  "suite-failed": "The test suite failed. Read its output tail, then retry.",
  "verdict-fail": "The verifier rejected the work. Read its findings, clarify the issue if needed, then retry.",
  "agent-exit": "The coding agent exited with an error. Check the agent command and its credentials, then retry.",
  "agent-timeout": "The coding agent ran out of time. Raise `agent.timeout_minutes` or split the story, then retry.",
  "artifact-missing": "A stage did not produce its expected artifact. Check the agent preset or command template, then retry.",
  "artifact-invalid": "A stage produced an artifact that failed validation. Check the agent preset, then retry.",
  "config-invalid": "`.github/harness.yml` is invalid. Fix it on the default branch as the message says, then retry.",
  interrupted: "The App stopped while the story ran. Retry to run it again from a fresh worktree.",
  "internal-error": "The harness itself failed. Check the App's logs, then retry.",
  environment: "The suite's command cannot start in the provisioned worktree (exit 126 or 127). Install what it needs through provisioning, then retry.",
  "baseline-red": "The suite already fails on the base commit, with the same output, so the change was not blamed. Make the default branch green, then retry.",
  "agent-unavailable":
    "The coding agent could not be used (not installed, no credentials, rate limited or unreachable, or a provider answering with bytes that are not its API's events). Fix the agent's setup, then retry.",
  "budget-exhausted":
    "The story spent its agent budget (turns per seat, agent minutes or tokens: `budget` in `.github/harness.yml`, within the operator's HARNESS_MAX_* ceilings). Its work so far is committed on the story branch; the check run shows what each seat spent, and what the story spent across its runs. Every run counts (retries and revisions too; kept in `HARNESS_HOME/budgets/`): raise the budget or narrow the story, then retry. A record of that spending that cannot be read blocks a budgeted story too, naming the file.",
  "push-refused": "GitHub refused the push of the story's branch; the work is kept in the run directory. Read GitHub's message, fix the cause, then retry.",
  "base-conflict": "The story branch conflicts with the default branch. Resolve the files named, or close the story and start again, then retry.",
  "scope-violation": "A task changed files outside the files its plan declared. Widen the plan's `files` or narrow the task, then retry.",
  "blocked-by-dependency": "A task this one depends on is blocked. Unblock that task, then retry.",
  "test-integrity":
    "The change weakened the test suite (a test deleted or skipped, fewer cases or assertions, the test command, its configuration or CI changed, a suppression added) in every attempt. Read the findings in `harness / integrity`; if the story needs them, comment `/harness accept-integrity`, or list the files under `integrity.allow` in `.github/harness.yml`.",
  "git-failed":
    "A git command failed (for example fetching or pushing: authentication, a missing ref, a full disk). Read git's message in the detail, fix the repository or the App's access, then retry.",
  "schema-invalid": "A record the harness reads or writes failed its JSON schema; the message names the file and the fields. Fix the file, then retry.",
  "clean-clone-interpreter":
    "The interpreter the clean-clone check needs is missing or unusable on the App's host. Install it or change `clean_clone` in `.github/harness.yml`, then retry.",
  "clean-clone-build-failed":
    "The fresh clone for the clean-clone check could not be built (clone, link or provisioning step). Read the step named in the detail, fix it, then retry.",
  usage: "A command was given bad arguments. Run it with `--help` and correct the arguments.",
};

/** One or two sentences on what to do about `failureClass`. */
export function adviceFor(failureClass: FailureClass): string {
  return ADVICE[failureClass];
}

/** The command that re-admits a blocked story. */
export const RETRY_COMMAND = "/harness retry-blocked";
