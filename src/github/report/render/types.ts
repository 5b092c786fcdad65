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
}
