/**
 * The gate's verdict on a change, pure: the findings on its test files, configuration and
 * workflows, the run counts compared, and which findings the repository or a writer accepted.
 */
import type { FileChange, Finding } from "./change.js";
import { configFindings } from "./config-changes.js";
import { compareRunCounts, type CountComparison, type RunCounts } from "./counts.js";
import { testFindings } from "./test-changes.js";

/** What the repository (`.github/harness.yml` `integrity`) and the writer accept ahead of the gate. */
export interface IntegrityPolicy {
  /** True for a file whose findings are accepted (`integrity.allow`'s globs, matched by the caller's matcher). */
  allowed: (path: string) => boolean;
  /** `allow`: a changed CI workflow is no finding (`integrity.workflows`); `hold` (the default): it is. */
  workflows: "allow" | "hold";
  /** Every finding accepted by this writer (`/harness accept-integrity`, `harness run --accept-integrity`). */
  acceptedBy?: string;
}

/** An accepted finding and who accepted it: a writer's login, or the repository's configuration. */
export type AcceptedFinding = Finding & { acceptedBy: string };

export interface IntegrityVerdict {
  /** Findings nobody accepted: the attempt fails on any. */
  findings: Finding[];
  accepted: AcceptedFinding[];
  counts: CountComparison;
  /** Files the gate wanted to read but could not (binary, too large, over the budget). */
  unread: string[];
  /** Files in the change. */
  files: number;
}

/** Who accepts findings on files the configuration's `integrity.allow` covers. */
export const CONFIG_ACCEPTANCE = ".github/harness.yml";

/** Judges `changes` (and the base's and the clean clone's run counts, when read; `baseMissing`: why the base has none) under `policy`. */
export function judgeChange(
  changes: readonly FileChange[],
  runs: { base?: RunCounts; head?: RunCounts; baseMissing?: string },
  policy: IntegrityPolicy,
): IntegrityVerdict {
  const counted = compareRunCounts(runs.base, runs.head, runs.baseMissing);
  const all = [...testFindings(changes), ...configFindings(changes, { workflows: policy.workflows !== "allow" }), ...counted.findings];
  const findings: Finding[] = [];
  const accepted: AcceptedFinding[] = [];
  for (const finding of all) {
    if (finding.file !== "" && policy.allowed(finding.file)) accepted.push({ ...finding, acceptedBy: CONFIG_ACCEPTANCE });
    else if (policy.acceptedBy !== undefined) accepted.push({ ...finding, acceptedBy: policy.acceptedBy });
    else findings.push(finding);
  }
  const unread = changes.filter((change) => change.unread !== undefined).map((change) => change.newPath ?? change.oldPath ?? "");
  return { findings, accepted, counts: counted.comparison, unread, files: changes.length };
}
