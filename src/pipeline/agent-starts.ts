/**
 * Before any seat runs, each preset CLI a seat may use is started once inside the sandbox
 * (`<cli> --version`): a program the host has but the sandbox's view does not (a script whose
 * interpreter lives in a home folder, a link out of the granted folders), or a CLI installed
 * without its native binary (Claude Code's postinstall skipped), would otherwise fail every
 * seat as `agent-exit`, three attempts long, its own words buried in `agent.log`.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { presetProgram, type AgentLaunch, type AgentPreset } from "../agents/index.js";
import type { Sandbox } from "../sandbox/index.js";
import { agentStartKey, agentStartKept, forgetAgentStart, keepAgentStart } from "./agent-start-cache.js";
import type { HarnessConfig } from "./config.js";
import type { Workflow } from "./workflow-types.js";

/** How long `--version` may take: a CLI that cannot answer it in this time cannot run a seat either. */
const VERSION_TIMEOUT_MS = 60_000;
/** The most of a CLI's words a message quotes. */
const MAX_WORDS = 600;

/** Why one preset's program did not start, in its own (or bubblewrap's) words. */
interface StartFailure {
  program: string;
  words: string;
  logPath: string;
}

/** The bindings each enabled seat of `workflow` may launch, the fallbacks included. */
function seatBindings(config: HarnessConfig, workflow: Workflow): Map<string, AgentLaunch[]> {
  const seats = new Set(workflow.stages.flatMap((stage) => [stage.seat, stage.fix?.seat].filter((seat): seat is string => seat !== undefined)));
  const bindings = new Map<string, AgentLaunch[]>();
  for (const seat of seats) {
    const override = config.seats[seat];
    if (override && !override.enabled) continue;
    const own = override && (override.command !== undefined || override.preset !== undefined);
    const fallback = (override?.fallback ?? config.agent.fallback ?? []).map((preset) => ({ preset }));
    bindings.set(seat, [own ? override : config.agent, ...fallback]);
  }
  return bindings;
}

/** The last lines of what the program said, on one line each, bounded. */
function wordsOf(tail: string, spawnError: string | undefined): string {
  const said = tail
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .slice(-5)
    .join(" / ");
  const words = said !== "" ? said : (spawnError ?? "it said nothing");
  return words.length > MAX_WORDS ? `…${words.slice(-MAX_WORDS)}` : words;
}

/**
 * Starts `<program> --version` of every preset a seat may use, once each, in the sandbox (no
 * network, a folder of `logDir` as its only writable place). Returns the reason the story cannot
 * run (a seat none of whose agents starts; a command template is not started, as its program
 * may do anything when asked its version), or undefined when every seat has one that starts.
 * With `harnessHome`, a CLI that started on this host under the same key (see
 * agent-start-cache.ts) is not started again, and only a start that succeeded is kept.
 */
export async function agentsThatCannotStart(
  config: HarnessConfig,
  workflow: Workflow,
  sandbox: Sandbox,
  logDir: string,
  harnessHome?: string,
): Promise<string | undefined> {
  const results = new Map<AgentPreset, Promise<StartFailure | undefined>>();
  const start = (preset: AgentPreset): Promise<StartFailure | undefined> => {
    const known = results.get(preset);
    if (known) return known;
    const program = presetProgram(preset);
    const key = harnessHome === undefined ? undefined : agentStartKey(program, sandbox);
    if (harnessHome !== undefined && key !== undefined && agentStartKept(harnessHome, program, key)) {
      const kept = Promise.resolve(undefined);
      results.set(preset, kept);
      return kept;
    }
    const dir = join(logDir, `agent-start-${preset}`);
    mkdirSync(dir, { recursive: true });
    const logPath = join(dir, "version.log");
    const started = sandbox
      .run([program, "--version"], { cwd: dir, timeoutMs: VERSION_TIMEOUT_MS, logPath }, { purpose: "agent", network: false, writable: [dir] })
      .then((result): StartFailure | undefined => {
        const ok = result.exitCode === 0 && !result.timedOut && result.spawnError === undefined;
        if (harnessHome !== undefined) {
          // A failure is never kept: its fix need not change the key, so the next story checks again.
          if (ok && key !== undefined) keepAgentStart(harnessHome, program, key);
          else if (!ok) forgetAgentStart(harnessHome, program);
        }
        if (ok) return undefined;
        const how = result.timedOut ? "did not answer within its timeout" : result.exitCode !== null ? `exited ${result.exitCode}` : "could not start";
        return { program, logPath, words: `${how}: ${wordsOf(result.tail, result.spawnError)}` };
      });
    results.set(preset, started);
    return started;
  };
  for (const [seat, bindings] of seatBindings(config, workflow)) {
    const presets = bindings.map((binding) => (binding.command === undefined ? binding.preset : undefined));
    // A template, or a binding with no agent at all (preflight's to report), is not started here.
    if (presets.some((preset) => preset === undefined)) continue;
    const failures = await Promise.all((presets as AgentPreset[]).map((preset) => start(preset)));
    if (failures.every((failure) => failure !== undefined)) {
      const told = failures.map((failure) => `'${failure.program} --version' ${failure.words} (log: ${failure.logPath})`);
      const unseen = failures.some((failure) => /No such file or directory|not found/i.test(failure.words));
      const hint = unseen ? "; the sandbox shows its steps the system folders and HARNESS_SANDBOX_READ: install the CLI (and its interpreter) there" : "";
      return `no agent of the ${seat} seat can start in the sandbox: ${[...new Set(told)].join("; ")}${hint}`;
    }
  }
  return undefined;
}
