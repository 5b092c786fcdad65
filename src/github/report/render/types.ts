/** Shapes shared by the renderers. */

/** A check run's annotation on one line of a file (GitHub takes at most 50 per request). */
export interface CheckAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: "notice" | "warning" | "failure";
  message: string;
  title?: string;
}

/** The `output` of a check run. */
export interface CheckRunOutput {
  title: string;
  summary: string;
  text?: string;
  annotations?: CheckAnnotation[];
}

export interface RenderOptions {
  /** Secret values to remove from every rendered tail and command, beyond the token patterns. */
  secrets?: readonly string[];
  /** The admitted revision of the story's issue (its `updated_at`), shown in the status comment. */
  revision?: string;
  /** The story's revision rounds after its pull request opened, the last one being this run when it is a revision. */
  revisions?: RevisionRow[];
  /** Said under the Revisions table: why a trigger started nothing (`iterate.max_rounds` spent, the same failure again). */
  iterateNote?: string;
}

/** One revision round as the status comment's Revisions table lists it. */
export interface RevisionRow {
  round: number;
  /** `review by @x`, `/harness revise by @x`, `CI: <app> (<checks>)`. */
  trigger: string;
  /** Absent while the round runs: the status comment shows the run's own outcome then. */
  outcome?: string;
  /** For a CI round: `<check>:<signature>` of each failure it was asked to fix. */
  signatures?: string[];
}
