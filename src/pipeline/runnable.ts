import { assertAgentEnvAllowed, type HarnessConfig } from "./config.js";
import { ConfigError } from "./errors.js";
import { seatLaunch } from "./task.js";
import type { Workflow } from "./workflow-types.js";

/**
 * Checks, before anything runs, that a configuration can drive a workflow: the agent
 * environment is within the operator's allowlist, every enabled seat has an agent, and a
 * test command exists when a stage runs the suite or the clean-clone check. Returns the test
 * command. Throws {@link ConfigError} naming `source` and the key.
 */
export function checkRunnable(config: HarnessConfig, workflow: Workflow, operatorAllow: readonly string[], source: string): { testCommand?: string } {
  assertAgentEnvAllowed(config, operatorAllow, source);
  for (const stage of workflow.stages) {
    const fixer = stage.fix ? seatLaunch(config, stage.fix.seat) : null;
    if (fixer && fixer.launch.command === undefined && fixer.launch.preset === undefined) {
      throw new ConfigError(source, "$.agent", `names no agent for seat '${stage.fix?.seat ?? ""}': set agent.preset or agent.command`);
    }
    const seat = stage.seat !== undefined ? seatLaunch(config, stage.seat) : null;
    if (seat && seat.launch.command === undefined && seat.launch.preset === undefined) {
      throw new ConfigError(source, "$.agent", `names no agent for seat '${stage.seat}': set agent.preset or agent.command`);
    }
    if ((stage.gate === "suite" || stage.cleanClone !== undefined) && config.test.command === undefined) {
      throw new ConfigError(source, "$.test.command", `is required: stage '${stage.id}' runs the test suite`);
    }
  }
  return config.test.command !== undefined ? { testCommand: config.test.command } : {};
}
