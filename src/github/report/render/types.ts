/** Shapes shared by the renderers. */

/** The `output` of a check run. */
export interface CheckRunOutput {
  title: string;
  summary: string;
  text?: string;
}

export interface RenderOptions {
  /** Secret values to remove from every rendered tail and command, beyond the token patterns. */
  secrets?: readonly string[];
  /** The admitted revision of the story's issue (its `updated_at`), shown in the status comment. */
  revision?: string;
}
