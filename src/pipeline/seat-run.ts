/**
 * A stage's seat: its agent bindings dispatched in order (fallback, parking on a rate
 * limit), the agent's exit judged, and its artifacts checked. An agent that could not work
 * at all is `agent-unavailable`, infrastructure outside the attempt ladder; a missing or
 * invalid verdict re-runs the seat once, telling it what was wrong, before the attempt fails.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { agentLogTail, dispatchSeat, presetProgram, redactAgentText, withLogTail } from "../agents/index.js";
import { forgetAgentStart } from "./agent-start-cache.js";
import { spendingOf } from "./budget.js";
import { checkArtifacts } from "./checks.js";
import { type CheckFailure } from "./check-results.js";
import type { TaskRun } from "./task.js";
import type { Stage } from "./workflow-types.js";
import type { SeatBinding } from "./seat-binding.js";

/** How the seat ended: nothing wrong, or a failure (infrastructure when no agent could work). */
export type SeatEnd = { ok: true } | { ok: false; failure: CheckFailure; infrastructure: boolean };

/** Runs the seat of `stage`, re-running it once when the verdict is missing or invalid. */
export async function runSeatOfStage(
  task: TaskRun,
  stage: Stage,
  attempt: number,
  seat: SeatBinding,
  promptFile: string,
  artifactDir: string,
): Promise<SeatEnd> {
  const stageDir = task.layout.stageDir(attempt, stage.id);
  let prompt = promptFile;
  for (let run = 1; ; run += 1) {
    const suffix = run === 1 ? "" : `-rerun-${run - 1}`;
    const end = await launchOnce(
      task,
      stage,
      attempt,
      seat,
      prompt,
      artifactDir,
      join(stageDir, `agent${suffix}.log`),
      join(stageDir, `transcript${suffix}.jsonl`),
    );
    if (!end.ok) return end;
    const artifactFailure = await checkArtifacts(stage, artifactDir);
    if (!artifactFailure) return { ok: true };
    const verdictProblem = stage.verdict !== undefined && artifactFailure.reason.includes(stage.verdict);
    if (!verdictProblem || run > 1) return { ok: false, failure: artifactFailure, infrastructure: false };
    // The verifier did its work but left no usable verdict: ask it again, not the implementer.
    prompt = join(stageDir, "prompt-rerun.md");
    writeFileSync(prompt, verdictRerunPrompt(promptFile, artifactFailure.reason, join(artifactDir, stage.verdict ?? "verdict.json")));
    await task.sink.emit({
      kind: "seat.rerun",
      taskId: task.taskId,
      stage: stage.id,
      attempt,
      reason: artifactFailure.reason.slice(0, 1000),
      logPath: join(stageDir, `agent-rerun-${run}.log`),
    });
  }
}

async function launchOnce(
  task: TaskRun,
  stage: Stage,
  attempt: number,
  seat: SeatBinding,
  promptFile: string,
  artifactDir: string,
  logPath: string,
  transcriptPath: string,
): Promise<SeatEnd> {
  const taskId = task.worktree.taskId;
  const spentBefore = task.budget.exhausted();
  if (spentBefore !== undefined) return budgetExhausted(stage, spentBefore);
  task.seatsLaunched += 1;
  const launchedAt = task.clock().toISOString();
  // The agent's credentials as it receives them, read once: the seat's texts are redacted of them, string by string.
  const agentValues = task.agentEnv.map((name) => process.env[name] ?? "");
  const boot = task.agentBoots.launched();
  const dispatched = await dispatchSeat(
    {
      stage: stage.id,
      attempt,
      task: task.taskId,
      worktree: task.worktree.path,
      promptFile,
      artifactDir,
      logPath,
      transcriptPath,
      // What is kept of an agent holds neither the App's secrets nor the agent's own credentials.
      redact: (text: string) => task.redact(redactAgentText(text, agentValues)),
      // The seat may run no longer than the story's agent minutes left, and take no more turns than a seat may.
      timeoutMs: task.budget.seatTimeout(seat.timeoutMs),
      ...(task.budget.budget.maxTurnsPerSeat !== undefined ? { maxTurns: task.budget.budget.maxTurnsPerSeat } : {}),
      envAllow: task.agentEnv,
      sandbox: task.sandbox,
      ...(task.signal ? { signal: task.signal } : {}),
      // The baseline gives way to the agent until its start is over (agent-boots.ts).
      onSpawn: (pid: number) => boot.spawned(pid),
    },
    [seat.launch, ...seat.fallback],
    {
      now: task.clock,
      sleepUntil: task.deps.sleepUntil,
      run: task.deps.runSeat,
      onUnavailable: async (binding) => {
        // A CLI kept as starting that a seat then finds not installed: the next story checks its start again.
        if (binding.unavailable.reason === "not-installed" && binding.launch.command === undefined && binding.launch.preset !== undefined)
          forgetAgentStart(task.harnessHome, presetProgram(binding.launch.preset));
        await task.sink.emit({
          kind: "seat.unavailable",
          taskId,
          stage: stage.id,
          attempt,
          command: binding.command,
          reason: binding.unavailable.reason,
          message: binding.unavailable.message,
          ...(binding.unavailable.resetAt !== undefined ? { resetAt: binding.unavailable.resetAt } : {}),
        });
      },
      onParked: async (until) => {
        await task.sink.emit({ kind: "seat.parked", taskId, stage: stage.id, attempt, until: until.toISOString() });
      },
    },
  ).finally(() => boot.ended());
  // Every way a seat fails names its log and what the agent last said there (its credentials redacted).
  const told = async (reason: string): Promise<string> => withLogTail(reason, logPath, task.redact(await agentLogTail(logPath, agentValues)));
  if (dispatched.kind === "unavailable") {
    const last = dispatched.unavailable.at(-1)?.unavailable;
    const tried = dispatched.unavailable.map((binding) => `${binding.command.split(" ")[0] ?? binding.command}: ${binding.unavailable.reason}`);
    return {
      ok: false,
      infrastructure: true,
      failure: {
        failureClass: "agent-unavailable",
        reason: await told(`no agent of the ${stage.seat ?? stage.id} seat could work (${[...new Set(tried)].join("; ")})${last ? `: ${last.message}` : ""}`),
      },
    };
  }
  const result = dispatched.result;
  const spent = task.budget.spend(spendingOf(result), result.timedOut || result.exitCode !== 0);
  if (result.usage !== undefined) {
    const story = task.budget.totals();
    await task.sink.emit({
      kind: "seat.usage",
      taskId,
      stage: stage.id,
      attempt,
      turns: result.usage.turns,
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      durationMs: result.durationMs,
      badLines: result.usage.badLines,
      transcript: relative(task.layout.root, transcriptPath),
      launchedAt,
      story: { runs: story.runs, tokens: story.tokens, agentMs: story.agentMs },
    });
  }
  if (spent !== undefined) return budgetExhausted(stage, spent);
  if (result.timedOut)
    return {
      ok: false,
      infrastructure: false,
      failure: { failureClass: "agent-timeout", reason: await told(`the ${stage.seat ?? stage.id} agent was stopped at its timeout (${seat.timeoutMs} ms)`) },
    };
  if (result.exitCode !== 0) {
    const why = result.spawnError ?? `exited ${result.exitCode ?? "on a signal"}`;
    return { ok: false, infrastructure: false, failure: { failureClass: "agent-exit", reason: await told(`the ${stage.seat ?? stage.id} agent ${why}`) } };
  }
  return { ok: true };
}

/** The story's budget is spent: it blocks at once (its work so far committed), outside the attempt ladder. */
function budgetExhausted(stage: Stage, why: string): SeatEnd {
  return {
    ok: false,
    infrastructure: true,
    failure: { failureClass: "budget-exhausted", reason: `the story's agent budget is spent at the ${stage.seat ?? stage.id} seat: ${why}` },
  };
}

function verdictRerunPrompt(original: string, problem: string, verdictPath: string): string {
  return [
    `Your previous run of this stage ended without a usable verdict: ${problem}.`,
    "",
    `Do not change the code again. Judge the change as the prompt below asks, then write the verdict to ${verdictPath}:`,
    'a JSON object {"verdict": "pass" | "fail", "findings": [strings], "retryGuidance": string (optional)}.',
    "",
    "---",
    "",
    readFileSync(original, "utf8"),
  ].join("\n");
}
