import { existsSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { AGENT_PRESETS, type AgentPreset } from "../agents/index.js";
import {
  assertPreflight,
  consoleReporter,
  DEFAULT_HARNESS_CONFIG,
  loadWorkflow,
  parseHarnessConfig,
  runDirectory,
  runStory,
  withOverrides,
  type Reporter,
  type HarnessConfig,
  type StoryInput,
} from "../pipeline/index.js";
import { git, gitResult, harnessHome, isWorkTree } from "../workspace/index.js";
import { UsageError, type CliIO } from "./usage.js";
import { COMMAND_OPTIONS } from "./options.js";
import { isInputError, strictArgs } from "./validate.js";
import {
  assertSandboxUsable,
  probeSandboxCached,
  sandboxFromEnv,
  SandboxSettingsError,
  SandboxUnavailableError,
  UNSANDBOXED_WARNING,
  HOST_NETWORK_WARNING,
} from "../sandbox/index.js";
import { readBoundedTextSync } from "../files/index.js";
import { evidenceCollector } from "./run-evidence.js";

/** A `.github/harness.yml` is a page of YAML; GitHub's contents API, which the App reads it through, stops at 1 MiB. */
const MAX_CONFIG_BYTES = 1024 * 1024;

const USAGE =
  "harness run [<repo>] --story <file.md> [--agent <preset>|--agent-cmd <template>] [--workflow <file>] [--test-cmd <cmd>] [--concurrency <n>] [--continue|--fresh] [--accept-integrity]";

/** Reads a story file: the first heading (or first line) is the title, the rest the body. */
export function readStory(path: string): StoryInput {
  const text = readFileSync(path, "utf8");
  const lines = text.split(/\r?\n/);
  const first = lines.findIndex((line) => line.trim() !== "");
  const title = first >= 0 ? (lines[first] ?? "").replace(/^#+\s*/, "").trim() : "";
  const body =
    first >= 0
      ? lines
          .slice(first + 1)
          .join("\n")
          .trim()
      : "";
  const id = storySlug(basename(path).replace(/\.[^.]*$/, ""));
  return { id, title: title || id, body };
}

/** A branch-safe slug: lowercase letters, digits and dashes. */
export function storySlug(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60);
  return slug === "" ? "story" : slug;
}

/** Prints where the run's record is as soon as the run starts, then passes every event on. */
function withRunDirectory(inner: Reporter, home: string, write: (text: string) => void): Reporter {
  return {
    onEvent: async (event, snapshot) => {
      await inner.onEvent(event, snapshot);
      if (event.kind === "run.started") write(`run directory: ${runDirectory(home, event.storyId, event.runId)}\n`);
    },
  };
}

/**
 * `harness run`: runs the whole pipeline on a local repository in a linked worktree under the
 * harness data directory, printing a line per step. The user's working tree and current
 * branch are not touched. Exit 0 completed, 1 blocked, 2 bad arguments or configuration.
 */
export async function runCommand(args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = strictArgs(
    USAGE,
    () =>
      parseArgs({
        args,
        allowPositionals: true,
        strict: true,
        options: COMMAND_OPTIONS.run,
      }),
    "run",
  );
  if (positionals.length > 1) throw new UsageError(`expected at most one repository, got ${positionals.length}`, USAGE);
  if (values.story === undefined) throw new UsageError("--story <file.md> is required", USAGE);
  if (values.agent !== undefined && values["agent-cmd"] !== undefined) throw new UsageError("give --agent or --agent-cmd, not both", USAGE);
  if (values.agent !== undefined && !AGENT_PRESETS.includes(values.agent as AgentPreset)) {
    throw new UsageError(`--agent must be one of ${AGENT_PRESETS.join(", ")}, got '${values.agent}'`, USAGE);
  }
  for (const flag of ["agent-cmd", "test-cmd", "workflow", "story"] as const) {
    if (values[flag] !== undefined && values[flag].trim() === "") throw new UsageError(`--${flag} must not be blank`, USAGE);
  }
  if (values.continue && values.fresh) throw new UsageError("give --continue or --fresh, not both", USAGE);
  const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
  if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32)) {
    throw new UsageError(`--concurrency must be a whole number from 1 to 32, got '${values.concurrency ?? ""}'`, USAGE);
  }
  const storyFile = resolve(io.cwd, values.story);
  if (!existsSync(storyFile)) throw new UsageError(`story file ${storyFile} does not exist`, USAGE);
  const repoArg = resolve(io.cwd, positionals[0] ?? ".");
  if (!existsSync(repoArg) || !(await isWorkTree(repoArg))) throw new UsageError(`${repoArg} is not a git repository`, USAGE);
  const repoDir = await git(["rev-parse", "--show-toplevel"], { cwd: repoArg, readOnly: true });
  const head = await gitResult(["rev-parse", "-q", "--verify", "HEAD^{commit}"], { cwd: repoDir, readOnly: true });
  if (head.exitCode !== 0)
    throw new UsageError(`${repoDir} has no commit yet: a story starts from HEAD (make a first commit, e.g. git commit --allow-empty -m init)`, USAGE);

  let config: HarnessConfig;
  let configSource = "command line";
  try {
    const configFile = join(repoDir, ".github", "harness.yml");
    config = DEFAULT_HARNESS_CONFIG;
    if (existsSync(configFile)) {
      configSource = configFile;
      // The repository's file: bounded like every read of repository content (a FIFO there must not hang the command).
      config = parseHarnessConfig(readBoundedTextSync(configFile, { maxBytes: MAX_CONFIG_BYTES }), configFile);
    }
    config = withOverrides(config, {
      ...(values.agent !== undefined ? { agentPreset: values.agent as AgentPreset } : {}),
      ...(values["agent-cmd"] !== undefined ? { agentCommand: values["agent-cmd"] } : {}),
      ...(values["test-cmd"] !== undefined ? { testCommand: values["test-cmd"] } : {}),
    });
    const workflow = loadWorkflow(values.workflow !== undefined ? resolve(io.cwd, values.workflow) : undefined);
    // Preflight looks at programs as the sandbox shows them, so the sandbox's settings come first.
    const sandbox = sandboxFromEnv(io.env);
    // Locally the user is the operator: the agent may receive what the configuration names.
    await assertPreflight({
      sandboxSees: (path) => sandbox.canRun(path),
      config,
      source: configSource,
      workflow,
      operatorAllow: config.agent.env,
      base: { repoDir, ref: "HEAD" },
      ...(io.env.PATH !== undefined ? { searchPath: io.env.PATH } : {}),
    });
    const story = readStory(storyFile);
    // The integrity gate judges the work against where the user's branch stands now, whatever an earlier run left on the story branch.
    const startedFrom = await git(["rev-parse", "--verify", "HEAD^{commit}"], { cwd: repoDir, readOnly: true });
    const branch = `harness/story-${story.id}`;
    await settleExistingBranch(repoDir, branch, { continue: values.continue === true, fresh: values.fresh === true });
    const home = harnessHome(io.env);
    const status = await assertSandboxUsable(sandbox, (box) => probeSandboxCached(box, home));
    if (status.state === "off") io.stderr(`harness run: WARNING: ${UNSANDBOXED_WARNING}\n`);
    if (status.state === "on" && status.hostNetwork) io.stderr(`harness run: WARNING: ${HOST_NETWORK_WARNING}\n`);
    const evidence = evidenceCollector();
    const controller = new AbortController();
    const onInterrupt = (): void => controller.abort();
    process.once("SIGINT", onInterrupt);
    try {
      const outcome = await runStory({
        repoDir,
        story,
        branch,
        baseRef: "HEAD",
        config,
        configSource,
        workflow,
        harnessHome: home,
        reporter: evidence.wrap(withRunDirectory(consoleReporter(io.stdout), home, io.stdout)),
        agentEnvAllow: config.agent.env,
        ...(concurrency !== undefined ? { concurrency } : {}),
        integrityBase: startedFrom,
        ...(values["accept-integrity"] === true ? { acceptIntegrity: localAcceptor(io.env) } : {}),
        signal: controller.signal,
        sandbox,
      });
      if (outcome.status === "completed") return 0;
      io.stderr(
        `harness run: story blocked (${outcome.failureClass ?? "unknown"}): ${outcome.detail ?? ""}\n${evidence.render(outcome.failureClass)}run directory: ${outcome.runDir}\n`,
      );
      return 1;
    } finally {
      process.removeListener("SIGINT", onInterrupt);
    }
  } catch (error) {
    const sandboxRefused = error instanceof SandboxUnavailableError || error instanceof SandboxSettingsError;
    if (!isInputError(error) && !sandboxRefused) throw error;
    io.stderr(`harness run: ${error.message}\n`);
    return 2;
  }
}

/** Who accepts integrity findings on the command line: the local user, marked as local (there is no GitHub login). */
function localAcceptor(env: Readonly<Record<string, string | undefined>>): string {
  return `local user ${env.USER ?? env.LOGNAME ?? "(unknown)"} (--accept-integrity)`;
}

/**
 * A story branch left by an earlier run is neither stacked on silently nor thrown away
 * silently: the user says which (`--continue` carries on from its tip, `--fresh` deletes it).
 */
async function settleExistingBranch(repoDir: string, branch: string, choice: { continue: boolean; fresh: boolean }): Promise<void> {
  const exists = await gitResult(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`], { cwd: repoDir, readOnly: true });
  if (exists.exitCode !== 0) return;
  if (choice.continue) return;
  if (!choice.fresh) {
    const tip = exists.stdout?.toString().trim().slice(0, 12) ?? "";
    throw new UsageError(
      `branch ${branch} exists (at ${tip}) from an earlier run: give --continue to carry on from it, or --fresh to delete it and start again`,
      USAGE,
    );
  }
  const deleted = await gitResult(["branch", "-D", branch], { cwd: repoDir });
  if (deleted.exitCode !== 0) throw new UsageError(`--fresh: could not delete branch ${branch}: ${deleted.tail.trim()}`, USAGE);
}
