/** Small Markdown building blocks shared by the renderers. */
import type { StageSnapshot, StepPolicy } from "../../../pipeline/index.js";
import { keepLastBytes } from "../../index.js";
import { redactSecrets } from "../../index.js";
import { codeBlock } from "../../../text/index.js";

export { codeBlock, inlineCode } from "../../../text/index.js";

/** A table cell: pipes escaped, one line. */
export function tableCell(text: string): string {
  return text.replace(/[\r\n]+/g, " ").replace(/\|/g, "\\|");
}

/** "1.2 s", "3 min 4 s", "250 ms". */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  // Whole seconds first, so 119.6 s is "2 min 0 s", not "1 min 60 s".
  const whole = Math.round(seconds);
  const minutes = Math.floor(whole / 60);
  return `${minutes} min ${whole - minutes * 60} s`;
}

const STATE_LABELS: Record<StageSnapshot["state"], string> = {
  pending: "⏸️ pending",
  running: "⏳ running",
  passed: "✅ passed",
  failed: "❌ failed",
};

/** The stage table of the story check run and the status comment. */
export function stageTable(stages: readonly StageSnapshot[]): string {
  const rows = stages.map((stage) =>
    // A pending stage's attempt and duration belong to an earlier attempt: showing them would mislead.
    stage.state === "pending"
      ? `| ${tableCell(stage.id)} | ${STATE_LABELS.pending} | – | – |`
      : `| ${tableCell(stage.id)} | ${STATE_LABELS[stage.state]} | ${stage.attempt} | ${formatDuration(stage.durationMs) || "–"} |`,
  );
  return ["| Stage | State | Attempt | Duration |", "| --- | --- | --- | --- |", ...rows].join("\n");
}

/** Bytes of an output tail kept in one rendered block; several fit a check run's 65,535 bytes. */
export const TAIL_BLOCK_BYTES = 24 * 1024;

/** A redacted, bounded output tail as a code block; the end of the output is what matters, so the start is cut. */
export function tailBlock(tail: string | undefined, secrets: readonly string[]): string {
  const text = redactSecrets(tail ?? "", secrets);
  if (text.trim() === "") return "_(no output)_";
  const kept = keepLastBytes(text, TAIL_BLOCK_BYTES);
  const note = kept.length < text.length ? "… (start of output cut)\n" : "";
  return `${note}${codeBlock(kept, "text")}`;
}

/** What a networked step's network was, after "network on". */
const NET_POLICY_NOTES: Record<"own" | "egress" | "host", string> = {
  own: " (a namespace of its own: no host loopback, link-local or private addresses)",
  egress: " (a namespace of its own, out only through the egress proxy to the hosts of HARNESS_EGRESS_ALLOW)",
  host: ": **the host's network** (HARNESS_SANDBOX_NET=host), its loopback, link-local and private addresses in reach",
};

/** The line saying which network the run's provisioning and agents had; none for an unsandboxed run (said elsewhere) or an old journal. */
export function networkLine(network: "own" | "egress" | "host" | undefined): string[] {
  if (network === undefined) return [];
  if (network === "host") {
    return [
      "⚠️ **Host network:** the operator runs this App with `HARNESS_SANDBOX_NET=host`, so provisioning, agents and networked suites shared the host's network, its loopback (the App, Redis), link-local (cloud metadata) and private addresses in reach.",
    ];
  }
  return [`**Network:** provisioning and agents ran sandboxed with the network on${NET_POLICY_NOTES[network]}.`];
}

/** The line saying which policy a step that ran repository code ran under. */
export function policyLine(policy: StepPolicy | undefined): string[] {
  if (!policy) return [];
  const sandbox = policy.sandboxed ? "sandboxed" : "**unsandboxed** (HARNESS_SANDBOX=off)";
  return [`**Ran:** ${sandbox}, network ${policy.network ? `on${policy.net ? NET_POLICY_NOTES[policy.net] : ""}` : "off"}`];
}
