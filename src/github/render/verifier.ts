/** Output of the `harness / verifier` check run: the suite gate and the verifier's verdict. */
import type { StorySnapshot } from "../../pipeline/index.js";
import { boundCheckRunOutput } from "../limits.js";
import { redactSecrets } from "../redact.js";
import { formatDuration, inlineCode, policyLine, tailBlock } from "./markdown.js";
import type { CheckRunOutput, RenderOptions } from "./types.js";

/** The suite gate and verdict of the snapshot's current attempt (earlier attempts have their own check runs). */
export function currentVerification(snapshot: StorySnapshot): {
  gate?: NonNullable<StorySnapshot["lastGate"]>;
  verdict?: NonNullable<StorySnapshot["lastVerdict"]>;
} {
  return {
    gate: snapshot.lastGate?.attempt === snapshot.attempt ? snapshot.lastGate : undefined,
    verdict: snapshot.lastVerdict?.attempt === snapshot.attempt ? snapshot.lastVerdict : undefined,
  };
}

/** True when a gate run did not pass. */
export function gateFailed(gate: NonNullable<StorySnapshot["lastGate"]>): boolean {
  return gate.timedOut || gate.exitCode !== 0;
}

/** Renders the suite command, exit code, output tail, verdict and findings of the current attempt. */
export function renderVerifierCheck(snapshot: StorySnapshot, options: RenderOptions = {}): CheckRunOutput {
  const secrets = options.secrets ?? [];
  const { gate, verdict } = currentVerification(snapshot);
  const attempt = `Attempt ${snapshot.attempt}`;
  if (!gate && !verdict) {
    const running = snapshot.outcome === "running";
    return {
      title: running ? `${attempt}: waiting` : `${attempt}: did not run`,
      summary: running ? "The suite gate and the verifier run after the implementer and tester stages." : `Did not run: the story ended (${snapshot.outcome}) before verification.`,
    };
  }
  const lines: string[] = [];
  if (gate) {
    const exit = gate.timedOut ? "timed out" : gate.exitCode === undefined ? "none" : String(gate.exitCode);
    lines.push(`**Suite:** ${inlineCode(redactSecrets(gate.command, secrets))}`, `**Exit code:** ${exit}`, `**Duration:** ${formatDuration(gate.durationMs)}`, ...policyLine(gate.policy), "");
  }
  if (verdict) {
    lines.push(`**Verdict:** ${verdict.verdict === "pass" ? "✅ pass" : "❌ fail"}`);
    if (verdict.findings.length > 0) lines.push("", "#### Findings", ...verdict.findings.map((finding) => `- ${redactSecrets(finding, secrets).replace(/\r?\n/g, " ")}`));
    if (verdict.retryGuidance) lines.push("", "#### Guidance for the next attempt", redactSecrets(verdict.retryGuidance, secrets));
    lines.push("");
  } else if (gate && !gateFailed(gate)) {
    lines.push("**Verdict:** waiting for the verifier", "");
  }
  lines.push(...sideBySide(snapshot, gate, verdict));
  if (gate) lines.push("#### Suite output tail", tailBlock(gate.outputTail, secrets));
  const title = verdict
    ? `${attempt}: verdict ${verdict.verdict}`
    : gate && gateFailed(gate)
      ? `${attempt}: suite failed (${gate.timedOut ? "timed out" : `exit ${gate.exitCode ?? "none"}`})`
      : `${attempt}: suite passed, verifier running`;
  return { title, summary: boundCheckRunOutput(lines.join("\n")) };
}

function suiteResult(run: { exitCode?: number; timedOut: boolean } | undefined): string {
  if (!run) return "not run yet";
  if (run.timedOut) return "⏱ timed out";
  return run.exitCode === 0 ? "✅ passed (exit 0)" : `❌ failed (exit ${run.exitCode ?? "none"})`;
}

/**
 * What the verifier claimed, what the suite gave on the base commit and what it gave on the
 * change, side by side: a reader sees at once whether a red suite is the change's doing.
 */
function sideBySide(snapshot: StorySnapshot, gate: ReturnType<typeof currentVerification>["gate"], verdict: ReturnType<typeof currentVerification>["verdict"]): string[] {
  const baseline = snapshot.baseline;
  if (!baseline) return [];
  const claim = verdict ? (verdict.verdict === "pass" ? "✅ pass" : "❌ fail") : "no verdict yet";
  return [
    "#### Claimed, base and change",
    "| | Result |",
    "|---|---|",
    `| Verifier's verdict (claimed) | ${claim} |`,
    `| Suite on the base commit \`${baseline.commit.slice(0, 12)}\` | ${suiteResult(baseline)} |`,
    `| Suite on the change (attempt ${snapshot.attempt}) | ${suiteResult(gate)} |`,
    "",
  ];
}
