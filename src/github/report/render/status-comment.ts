/** The one status comment on the story's pull request, edited in place as the story moves. */
import type { StorySnapshot } from "../../../pipeline/index.js";
import { boundComment } from "../../index.js";
import { redactSecrets } from "../../index.js";
import { inlineCode } from "./markdown.js";
import { untrustedLine } from "./text.js";
import { integritySection } from "./integrity.js";
import { blockedSection, progressLine, progressTables, retryLine } from "./story.js";
import type { RenderOptions } from "./types.js";
import { revisionsSection } from "./revisions.js";

/** Hidden marker by which the App finds its status comment again, even after a restart. */
export const STATUS_MARKER = "<!-- story-harness:status -->";

/** Renders the status comment: marker, progress, why the last attempt was sent back, stage table, blocked advice. */
export function renderStatusComment(snapshot: StorySnapshot, options: RenderOptions = {}): string {
  const secrets = options.secrets ?? [];
  const title = untrustedLine(redactSecrets(snapshot.title, secrets));
  const lines = [STATUS_MARKER, `## story-harness: ${title || snapshot.storyId}`, "", progressLine(snapshot)];
  if (options.revision) {
    lines.push(
      "",
      `Working on the issue as it was admitted (revision ${inlineCode(options.revision)}, its \`updated_at\`): later edits are used only once someone with write access re-admits the story.`,
    );
  }
  const retry = retryLine(snapshot, secrets);
  if (retry) lines.push("", retry);
  lines.push(...progressTables(snapshot));
  lines.push(...integritySection(snapshot, secrets));
  lines.push(...blockedSection(snapshot, secrets, false));
  lines.push(...revisionsSection(options.revisions ?? [], snapshot, options.iterateNote));
  return boundComment(lines.join("\n"));
}
