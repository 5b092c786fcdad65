/** The seat step every seat-driven kind shares: provisioning asserted, the prompt rendered, the agent dispatched, its artifacts checked. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderPrompt } from "../context.js";
import { runSeatOfStage } from "../seat-run.js";
import { type SeatBinding } from "../seat-binding.js";
import { ensureProvisioned } from "../task.js";
import { failed, type StageOutcome, type StageStep } from "./kind.js";

/**
 * Runs the stage's seat with its template rendered into `stageDir/prompt.md` and the artifact
 * directory `artifactDir`; undefined when the agent ended well and its artifacts are valid.
 */
export async function launchStageSeat(step: StageStep, seat: SeatBinding, stageDir: string, artifactDir: string): Promise<StageOutcome | undefined> {
  const { task, stage, attempt, retry } = step;
  if (stage.template === undefined) throw new Error(`stage '${stage.id}' has no seat template`);
  await ensureProvisioned(task, `seat:${stage.id}`);
  const promptFile = join(stageDir, "prompt.md");
  // A revision round's implementer works from the feedback (reviser.md) on every attempt; the other stages keep their own templates.
  const revising = task.revision !== undefined && task.revision.stageId === stage.id;
  const prompt = renderPrompt(revising && task.revision ? task.revision.template : stage.template, {
    ...(revising && task.revision ? { revision: task.revision.prompt } : {}),
    story: task.story,
    stage: stage.id,
    attempt,
    maxAttempts: task.maxAttempts,
    artifactDir,
    ...(retry ? { retry } : {}),
    ...(task.lastSuite ? { suite: task.lastSuite } : {}),
    ...(task.planContext ? { task: task.planContext } : {}),
  });
  writeFileSync(promptFile, prompt);
  const seatEnd = await runSeatOfStage(task, stage, attempt, seat, promptFile, artifactDir);
  return seatEnd.ok ? undefined : failed(seatEnd.failure, {}, seatEnd.infrastructure);
}
