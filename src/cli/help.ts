/**
 * What `harness <command> --help` prints: the usage line, what the command does and its
 * options. Answered before the command parses anything, so `--help` works on every command
 * whatever else is on the line.
 */

const COMMAND_HELP: Record<string, string> = {
  demo: `Usage: harness demo

Starts the App against a built-in fake GitHub with a sample repository and a scripted agent,
labels issues and prints what a maintainer would see: the draft pull request, the check runs,
the status comment, a blocked story and its retry. No network and no GitHub account; about
20 seconds. Needs a clone of the repository with its development dependencies (npm ci).
`,
  serve: `Usage: harness serve

Runs the GitHub App (the same as npm start). It is configured by the environment:
APP_ID, PRIVATE_KEY or PRIVATE_KEY_PATH, WEBHOOK_SECRET, GHE_HOST, GHE_PROTOCOL, PORT,
HARNESS_HOME, HARNESS_CONCURRENCY, HARNESS_AGENT_ENV, HARNESS_STORY_LABEL,
HARNESS_GITHUB_THROTTLE. Without credentials it serves Probot's setup page.
`,
  worker: `Usage: harness worker

Takes stories from the Redis queue and runs them (HARNESS_QUEUE=redis://host:6379/0 is
required), HARNESS_CONCURRENCY at a time, with its own HARNESS_HOME. It serves no webhooks;
any number of workers on any number of machines share one queue with one harness serve.
Also read: APP_ID, PRIVATE_KEY or PRIVATE_KEY_PATH, GHE_HOST, GHE_PROTOCOL, HARNESS_AGENT_ENV,
HARNESS_GITHUB_THROTTLE, HARNESS_INSTALLATION_SLOTS, HARNESS_LEASE_MS and the sandbox's variables.
`,
  run: `Usage: harness run [<repo>] --story <file.md> [options]

Runs a story through the workflow on a local repository, in a worktree under the harness data
directory (HARNESS_HOME); your working tree and current branch are not touched. The work is
committed to the branch harness/story-<slug>, where <slug> comes from the story file's name.

Options:
  --story <file.md>        the story: the first heading is its title, the rest its body
  --agent <preset>         claude-code, codex or aider (overrides agent in .github/harness.yml)
  --agent-cmd <template>   a shell command template with {prompt_file}, {artifact_dir}, {worktree}
  --workflow <file>        a workflow JSON (default: the built-in story workflow)
  --test-cmd <cmd>         the repository's test command (overrides test.command)
  --continue               the story branch exists: carry on from its tip
  --fresh                  the story branch exists: delete it and start again from HEAD
  --concurrency <n>        how many tasks of a planned story run at once
  --accept-integrity       accept the test-integrity gate's findings (listed as accepted, by you)

Preflight checks the configuration before anything is provisioned (exit 2 naming the file and key).
Exit codes: 0 completed, 1 blocked, 2 bad arguments or configuration.
`,
  provision: `Usage: harness provision <worktree> [--provision-cmd <string>] [--timeout-ms <n>] [--log <file>]

Provisions a worktree the way the harness does before any agent enters it (the configured
command, .harness/provision.sh, or the lockfile's install) and writes the receipt
.harness-provisioned.

Options:
  --provision-cmd <string>   the install command, run with /bin/sh -c (old name: --cmd)
  --timeout-ms <n>           stop it after n milliseconds
  --log <file>               where its output goes (default: under HARNESS_HOME/logs)

Exit codes: 0 provisioned, 2 bad arguments, 3 provisioning failed.
`,
  "clean-clone": `Usage: harness clean-clone [<repo>] --test-cmd <string> [options]

Commits the repository's current state into a fresh clone and runs the suite there: the
state that ships is the state that is tested. The commit is the one your own
\`git add -A && git commit\` would make (your global ignore file and line endings count).
Reads the clean_clone and test keys of .github/harness.yml; the options override them.

Options:
  --test-cmd <string>         the test command, run with /bin/sh -c (old name: --command)
  --link <dir>                a dependency root to link into the clone (repeatable; default: the usual ones)
  --no-link                   link nothing (the suite runs with what the commit holds)
  --interpreter <path>        run the suite with this interpreter's folder first on PATH
  --depth <n>                 only the last n commits of history, as CI's shallow checkout
  --env <NAME>                pass this variable of yours to the suite (repeatable)
  --provision                 install dependencies afresh in the clone instead of linking them
  --allow-external-symlinks   let symlinks to absolute paths outside the repository through (as warnings)
  --timeout-ms <n>            stop the suite after n milliseconds
  --out <file>                write clean-clone-result.json here
  --json                      print only the result JSON (no verdict line)

Exit codes: 0 passed, 1 failed, 2 could not run (bad arguments, a refused tree, a missing program).
`,
  validate: `Usage: harness validate <workflow.json|harness.yml> [--workflow <file>]

Options:
  --workflow <file>   check a .yml against this workflow instead of the built-in one

Checks a workflow (schema, stage references, prompt templates) or a .github/harness.yml
(schema and preflight: agent programs on PATH, placeholders, seat names, commands,
agent.env, clean_clone.link and interpreter; with the file inside a repository's .github
folder, also the repository's provisioning) without running anything. A program not
installed on this machine is a warning on stdout, not a failure (harness run refuses it).
A .yml is checked against the built-in workflow unless --workflow names another.

Exit codes: 0 valid, 2 invalid or unreadable (each problem names the file and key).
`,
  status: `Usage: harness status [--json]

Options:
  --json   print the JSON the status page serves

Lists the App's queued and running jobs, the stories still reporting (their job is done, their
end reports wait in the outbox), quarantined job files and GitHub writes not delivered yet (or
given up), read from HARNESS_HOME. With HARNESS_QUEUE=redis://… it lists the queue's
jobs from Redis and every worker's quarantined files and undelivered writes, which each worker
publishes there while it runs (one that stopped with work left shows as not live). The running
App serves the same JSON at GET /harness/status.json with
"Authorization: Bearer $HARNESS_STATUS_TOKEN" (404 when unset).
`,
};

/** The help text of `command`, or undefined for a command without one. */
export function commandHelp(command: string): string | undefined {
  return COMMAND_HELP[command];
}

/** True when the arguments ask for help (before a `--` that ends the options). */
export function asksForHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === "--") return false;
    if (arg === "--help" || arg === "-h") return true;
  }
  return false;
}
