import type { AppOctokit } from "./installation.js";

/** Where a repository's configuration lives. */
export const HARNESS_CONFIG_PATH = ".github/harness.yml";

/**
 * Reads `.github/harness.yml` from the default branch, as Probot's `context.config` does
 * (default branch only: a story branch cannot change the configuration it runs under).
 * Returns undefined when the file does not exist.
 */
export async function fetchHarnessConfigText(octokit: AppOctokit, args: { owner: string; repo: string; defaultBranch: string }): Promise<string | undefined> {
  try {
    const response = await octokit.rest.repos.getContent({ owner: args.owner, repo: args.repo, path: HARNESS_CONFIG_PATH, ref: args.defaultBranch });
    const data = response.data;
    if (Array.isArray(data) || data.type !== "file" || !("content" in data)) {
      throw new Error(`${HARNESS_CONFIG_PATH} is not a file`);
    }
    return Buffer.from(data.content, (data.encoding as BufferEncoding | undefined) ?? "base64").toString("utf8");
  } catch (error) {
    if (typeof error === "object" && error !== null && "status" in error && error.status === 404) return undefined;
    throw error;
  }
}
