/**
 * What `harness run` prints when a story is blocked, beyond its class and detail: the last
 * lines of the step that failed (the suite, the clean clone, the baseline, provisioning) with
 * the path of its whole log, and what to do about it. The evidence is gathered from the events
 * the run reports, so the terminal shows what the journal holds.
 */
import type { FailureClass, HistoryEvent, Reporter } from "../pipeline/index.js";
import { adviceFor } from "../github/report/index.js";

/** Lines of a failing step's output shown on the terminal; the log has all of them. */
export const EVIDENCE_LINES = 20;

/** A failing step's end, and where its whole output is. */
interface Evidence {
  what: string;
  tail: string;
  logPath?: string;
}

/** Gathers the evidence of failing steps from a run's events, and renders it for a blocked story. */
export interface EvidenceCollector {
  /** Passes every event to `inner`, keeping what a blocked story's report needs. */
  wrap(inner: Reporter): Reporter;
  /** The lines printed under "story blocked" for a story blocked as `failureClass` (each ends with a newline). */
  render(failureClass: FailureClass | undefined): string;
}

const key = (taskId: string | undefined, stage: string, attempt: number): string => `${taskId ?? ""}\u0000${stage}\u0000${attempt}`;

function lastLines(text: string, count: number): string {
  return text.replace(/\s+$/, "").split("\n").slice(-count).join("\n");
}

/** Why a story blocked as `failureClass` can be run again locally, once its cause is fixed. */
function whatToDo(failureClass: FailureClass): string {
  return `what to do: ${adviceFor(failureClass)} Then run harness run again (--continue carries on from the story branch, --fresh starts over).\n`;
}

/** A collector for one run. */
export function evidenceCollector(): EvidenceCollector {
  const steps = new Map<string, Evidence>();
  let baseline: Evidence | undefined;
  let provision: Evidence | undefined;
  let lastFailed: string | undefined;
  const keep = (event: HistoryEvent): void => {
    switch (event.kind) {
      case "gate.finished": {
        // A clean-clone gate that failed re-ran the suite in the worktree: a red re-run is what
        // failed the attempt (suite-failed); a green one leaves the clean clone's evidence.
        const inTree = event.where === "clean-clone" ? event.worktree : event;
        if (inTree !== undefined && (inTree.exitCode !== 0 || inTree.timedOut))
          steps.set(key(event.taskId, event.stage, event.attempt), {
            what: `the suite (\`${event.command}\`)`,
            tail: inTree.outputTail,
            ...(inTree.logPath !== undefined ? { logPath: inTree.logPath } : {}),
          });
        return;
      }
      case "clean_clone.finished": {
        const result = event.result;
        if (result.ran && result.exitCode === 0 && result.timedOut !== true) return;
        steps.set(key(event.taskId, event.stage, event.attempt), {
          what: result.ran ? `the suite in the clean clone (\`${result.command}\`)` : "the clean clone",
          tail: result.outputTail ?? result.reason ?? "",
          ...(event.logPath !== undefined ? { logPath: event.logPath } : {}),
        });
        return;
      }
      case "baseline.finished":
        if (event.exitCode !== 0 || event.timedOut) baseline = { what: `the suite on the base commit (\`${event.command}\`)`, tail: event.outputTail };
        return;
      case "provision.failed":
        provision = { what: `provisioning (\`${event.cmd ?? "none"}\`)`, tail: event.logTail };
        return;
      case "stage.finished":
        if (event.outcome === "failed") lastFailed = key(event.taskId, event.stage, event.attempt);
        return;
      default:
        return;
    }
  };
  const evidenceFor = (failureClass: FailureClass | undefined): Evidence | undefined => {
    if (failureClass === "workspace-provision-failed") return provision;
    if (failureClass === "baseline-red") return baseline;
    const step = lastFailed !== undefined ? steps.get(lastFailed) : undefined;
    // A suite that cannot start on the base blocks before any stage fails.
    return step ?? (failureClass === "environment" ? baseline : undefined);
  };
  return {
    wrap: (inner) => ({
      onEvent: async (event, snapshot) => {
        keep(event);
        await inner.onEvent(event, snapshot);
      },
    }),
    render: (failureClass) => {
      const evidence = evidenceFor(failureClass);
      const lines: string[] = [];
      if (evidence !== undefined && evidence.tail.trim() !== "") {
        const where = evidence.logPath !== undefined ? ` (whole log: ${evidence.logPath})` : "";
        lines.push(`the last lines of ${evidence.what}${where}:\n${lastLines(evidence.tail, EVIDENCE_LINES)}\n`);
      } else if (evidence?.logPath !== undefined) {
        lines.push(`${evidence.what} printed nothing (log: ${evidence.logPath})\n`);
      }
      if (failureClass !== undefined) lines.push(whatToDo(failureClass));
      return lines.join("");
    },
  };
}
