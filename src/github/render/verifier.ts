/** Output of the `harness / verifier` check run: the suite gate and the verifier's verdict. */
import type { StorySnapshot } from "../../pipeline/index.js";
import { boundCheckRunOutput } from "../limits.js";
import { redactSecrets } from "../redact.js";
import { formatDuration, inlineCode, policyLine, tailBlock } from "./markdown.js";
import { neutralise, untrustedLine } from "./text.js";
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
    if (verdict.findings.length > 0) lines.push("", "#### Findings", ...verdict.findings.map((finding) => `- ${untrustedLine(redactSecrets(finding, secrets), 4000)}`));
    if (verdict.retryGuidance) lines.push("", "#### Guidance for the next attempt", neutralise(redactSecrets(verdict.retryGuidance, secrets)));
    lines.push("");
  } else if (gate && !gateFailed(gate)) {
    lines.push("**Verdict:** waiting for the verifier", "");
  }
  if (gate) lines.push("#### Suite output tail", tailBlock(gate.outputTail, secrets));
  const title = verdict
    ? `${attempt}: verdict ${verdict.verdict}`
    : gate && gateFailed(gate)
      ? `${attempt}: suite failed (${gate.timedOut ? "timed out" : `exit ${gate.exitCode ?? "none"}`})`
      : `${attempt}: suite passed, verifier running`;
  return { title, summary: boundCheckRunOutput(lines.join("\n")) };
}
