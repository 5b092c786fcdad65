/**
 * Preflight: everything about a configuration that can be known before a worktree is made,
 * checked at once so that a mistake costs an exit 2 and a line naming the file and key,
 * not three agent attempts and a `retry-ceiling`.
 */
import { realpathSync } from "node:fs";
import { isAbsolute, normalize } from "node:path";
import { COMMAND_PLACEHOLDERS, presetProgram, type AgentLaunch, type AgentPreset } from "../../agents/index.js";
import { isNeverPassed } from "../../exec/index.js";
import { CleanCloneOptionsError, validateLinkName, PROVISION_HOOK } from "../../workspace/index.js";
import type { HarnessConfig } from "../config.js";
import { ConfigError } from "../errors.js";
import type { Workflow } from "../workflow-types.js";
import { didYouMean } from "./did-you-mean.js";
import { findOnPath, firstProgram, isExecutableFile } from "./programs.js";
import { treeEntries, type StoryBase } from "./repository.js";

/** What preflight looks at. */
export interface PreflightInput {
  config: HarnessConfig;
  /** The file the configuration came from, named in every problem. */
  source: string;
  workflow: Workflow;
  /** Environment names the operator lets agents receive. */
  operatorAllow: readonly string[];
  /** The commit the story starts from; without it the repository rules are not checked. */
  base?: StoryBase;
  /** PATH the agents and suites get (the harness's own by default). */
  searchPath?: string;
  /**
   * Whether a sandboxed step sees a path (the operator's sandbox, `Sandbox.sees`): a program found
   * on the host's PATH that the sandbox does not show cannot start there. Absent: not checked.
   */
  sandboxSees?: (path: string) => boolean;
}

/** One mistake: where it is and what is wrong. */
export interface PreflightProblem {
  source: string;
  /** JSON path of the key (`$.seats.verifer`, `$.agent.command`). */
  path: string;
  reason: string;
  /**
   * The problem is about the machine preflight ran on (a program not installed, or not shown to
   * the sandbox, there), not about the file: `harness run` refuses it, `harness validate` only warns.
   */
  machine?: true;
}

/** A configuration that preflight refused; `problems` lists every mistake found. */
export class PreflightError extends ConfigError {
  constructor(readonly problems: readonly PreflightProblem[]) {
    const first = problems[0] ?? { source: "configuration", path: "$", reason: "is invalid" };
    super(first.source, first.path, first.reason);
    this.message = problems.map((problem) => `${problem.source}: ${problem.path} ${problem.reason}`).join("\n");
  }
}

/** Where each preset's program comes from, for the hint when it is missing. */
const INSTALL_HINT: Record<AgentPreset, string> = {
  "claude-code": "npm install -g @anthropic-ai/claude-code",
  codex: "npm install -g @openai/codex",
  aider: "pip install aider-chat",
};
const LOCKFILES = ["pnpm-lock.yaml", "package-lock.json", "yarn.lock"];
/** Marks a problem as one about this machine (see {@link PreflightProblem.machine}). */
const ON_THIS_MACHINE = true;
const TEMPLATE_PLACEHOLDER = /(^|[^$])\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Runs every preflight rule and returns the problems found (none: the story may start). */
export async function preflight(input: PreflightInput): Promise<PreflightProblem[]> {
  const problems: PreflightProblem[] = [];
  const add: Add = (path, reason, machine) => {
    if (problems.some((problem) => problem.path === path && problem.reason === reason)) return;
    problems.push({ source: input.source, path, reason, ...(machine ? { machine } : {}) });
  };
  const { config, workflow } = input;
  const searchPath = input.searchPath ?? process.env.PATH ?? "";
  const sees = input.sandboxSees;

  blankCommands(config, add);
  config.agent.env.forEach((name, index) => {
    if (isNeverPassed(name)) add(`$.agent.env[${index}]`, `asks for '${name}', one of the App's own credentials, which never reach an agent`);
    else if (!input.operatorAllow.includes(name)) add(`$.agent.env[${index}]`, `asks for '${name}', which the operator does not allow agents to receive`);
  });
  // The workflow's seats: each stage's own and each fix ladder's fixer.
  const seats = new Set(workflow.stages.flatMap((stage) => [stage.seat, stage.fix?.seat].filter((seat): seat is string => seat !== undefined)));
  for (const name of Object.keys(config.seats)) {
    if (!seats.has(name)) add(`$.seats.${name}`, `names no seat of workflow '${workflow.name}' (seats: ${[...seats].join(", ")})${didYouMean(name, seats)}`);
  }
  for (const seat of seats) {
    const override = config.seats[seat];
    if (override && !override.enabled) continue;
    const own = override && (override.command !== undefined || override.preset !== undefined);
    const launch: AgentLaunch = own ? override : config.agent;
    const at = own ? `$.seats.${seat}` : "$.agent";
    if (launch.command === undefined && launch.preset === undefined) add(at, `names no agent for seat '${seat}': set agent.preset or agent.command`);
    checkLaunch(launch, at, searchPath, add, sees);
    const fallbackAt = override?.fallback !== undefined ? `$.seats.${seat}.fallback` : "$.agent.fallback";
    (override?.fallback ?? config.agent.fallback ?? []).forEach((preset, index) => checkLaunch({ preset }, `${fallbackAt}[${index}]`, searchPath, add, sees));
  }
  for (const stage of workflow.stages) {
    if ((stage.gate === "suite" || stage.cleanClone !== undefined) && config.test.command === undefined) {
      add("$.test.command", `is required: stage '${stage.id}' runs the test suite`);
    }
  }
  config.cleanClone.link?.forEach((name, index) => {
    try {
      validateLinkName(name, `clean_clone.link[${index}]`);
    } catch (error) {
      if (!(error instanceof CleanCloneOptionsError)) throw error;
      add(`$.clean_clone.link[${index}]`, `is '${name}', which ${error.problem}`);
    }
  });
  const testProgram = config.test.command !== undefined ? firstProgram(config.test.command) : undefined;
  if (testProgram !== undefined && sees) {
    const found = testProgram.includes("/") ? (isAbsolute(testProgram) ? testProgram : undefined) : findOnPath(testProgram, searchPath);
    const hidden = found !== undefined ? hiddenFromSandbox(found, sees) : undefined;
    if (hidden) add("$.test.command", `starts '${testProgram}', ${hidden}`, ON_THIS_MACHINE);
  }
  const interpreter = config.cleanClone.interpreter;
  if (interpreter !== undefined) checkInterpreter(interpreter, searchPath, add);
  if (input.base) await checkRepository(input.base, config, add);
  return problems;
}

/** Runs preflight and throws {@link PreflightError} listing every problem, if any. */
export async function assertPreflight(input: PreflightInput): Promise<void> {
  const problems = await preflight(input);
  if (problems.length > 0) throw new PreflightError(problems);
}

/** Records a problem; `machine` marks one about this machine rather than the file (see {@link PreflightProblem.machine}). */
type Add = (path: string, reason: string, machine?: true) => void;

function blankCommands(config: HarnessConfig, add: Add): void {
  const blank = (value: string | undefined): boolean => value !== undefined && value.trim() === "";
  if (blank(config.agent.command)) add("$.agent.command", "is blank");
  if (blank(config.test.command)) add("$.test.command", "is blank");
  if (blank(config.provision.command)) add("$.provision.command", "is blank");
  for (const [name, seat] of Object.entries(config.seats)) if (blank(seat.command)) add(`$.seats.${name}.command`, "is blank");
}

/**
 * Why a program found on the host cannot start in the sandbox, or undefined when it can: the
 * sandbox shows the system folders and HARNESS_SANDBOX_READ / _WRITE, not the host's home or
 * its temporary folder. Both the path found and the file a link leads to must be shown.
 */
function hiddenFromSandbox(found: string, sees: (path: string) => boolean): string | undefined {
  let real = found;
  try {
    real = realpathSync(found);
  } catch {
    return undefined;
  }
  const hidden = [found, real].find((path) => !sees(path));
  if (hidden === undefined) return undefined;
  return `found at ${found}${real !== found ? ` (${real})` : ""}, which the sandbox does not show its steps (${hidden}): add its folder to HARNESS_SANDBOX_READ, or install it under /usr or /opt`;
}

function checkLaunch(launch: AgentLaunch, at: string, searchPath: string, add: Add, sees?: (path: string) => boolean): void {
  if (launch.preset !== undefined) {
    const program = presetProgram(launch.preset);
    const found = findOnPath(program, searchPath);
    const hidden = found !== undefined && sees ? hiddenFromSandbox(found, sees) : undefined;
    if (hidden) add(at.endsWith("]") ? at : `${at}.preset`, `is '${launch.preset}', whose program '${program}' is ${hidden}`, ON_THIS_MACHINE);
    if (!found) {
      add(
        at.endsWith("]") ? at : `${at}.preset`,
        `is '${launch.preset}', whose program '${program}' is not on PATH: install it (${INSTALL_HINT[launch.preset]})${at.endsWith("]") ? " or remove it from the list" : ` or set ${at.slice(2)}.command`}`,
        ON_THIS_MACHINE,
      );
    }
    return;
  }
  const template = launch.command;
  if (template === undefined || template.trim() === "") return;
  for (const match of template.matchAll(TEMPLATE_PLACEHOLDER)) {
    const name = match[2] ?? "";
    if (!COMMAND_PLACEHOLDERS.includes(name)) {
      add(
        `${at}.command`,
        `uses unknown placeholder {${name}} (known: ${COMMAND_PLACEHOLDERS.map((known) => `{${known}}`).join(", ")})${didYouMean(name, COMMAND_PLACEHOLDERS)}`,
      );
    }
  }
  const program = firstProgram(template);
  if (program === undefined) return;
  if (!program.includes("/")) {
    const found = findOnPath(program, searchPath);
    if (!found) add(`${at}.command`, `starts '${program}', which is not on PATH`, ON_THIS_MACHINE);
    const hidden = found !== undefined && sees ? hiddenFromSandbox(found, sees) : undefined;
    if (hidden) add(`${at}.command`, `starts '${program}', ${hidden}`, ON_THIS_MACHINE);
  } else if (isAbsolute(program) && !isExecutableFile(program)) {
    add(`${at}.command`, `starts '${program}', which is not an executable file`, ON_THIS_MACHINE);
  } else if (isAbsolute(program) && sees) {
    const hidden = hiddenFromSandbox(program, sees);
    if (hidden) add(`${at}.command`, `starts '${program}', ${hidden}`, ON_THIS_MACHINE);
  }
  // A relative program lives in the task's worktree, which does not exist yet.
}

function checkInterpreter(interpreter: string, searchPath: string, add: Add): void {
  // A relative interpreter (`.venv/bin/python`) is made by provisioning; it cannot be checked
  // before, but it is resolved inside the clone, so one that climbs out of it never can be.
  if (!isAbsolute(interpreter) && normalize(interpreter).split("/")[0] === "..") {
    add("$.clean_clone.interpreter", `is '${interpreter}', which leaves the repository: a relative interpreter names a file inside the clone`);
  } else if (!interpreter.includes("/")) {
    if (!findOnPath(interpreter, searchPath)) add("$.clean_clone.interpreter", `is '${interpreter}', which is not on PATH`, ON_THIS_MACHINE);
  } else if (isAbsolute(interpreter) && !isExecutableFile(interpreter)) {
    add("$.clean_clone.interpreter", `is '${interpreter}', which is not an executable file on this machine`, ON_THIS_MACHINE);
  }
}

async function checkRepository(base: StoryBase, config: HarnessConfig, add: Add): Promise<void> {
  if (config.provision.command !== undefined) return;
  const root = new Set((await treeEntries(base)).map((entry) => entry.path));
  if (!root.has("package.json") || LOCKFILES.some((file) => root.has(file))) return;
  const hook = await treeEntries(base, [PROVISION_HOOK]);
  if (hook.some((entry) => entry.mode === "100755")) return;
  add(
    "$.provision.command",
    `is required: package.json has no lockfile (${LOCKFILES.join(", ")}), so provisioning would install nothing and the suite would run without its dependencies; set provision.command (for example "npm install") or commit a lockfile`,
  );
}
