/** Who may run commands: people with write, maintain or admin permission on the repository. */
import type { ProbotOctokit } from "probot";
import { hasStatus } from "../index.js";

const WRITER_ROLES = new Set(["write", "maintain", "admin"]);

/** The repository role of `username`, as GitHub reports it (`none` when not a collaborator). */
export async function repositoryRole(octokit: ProbotOctokit, owner: string, repo: string, username: string): Promise<{ permission: string; roleName: string }> {
  try {
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username });
    return { permission: data.permission, roleName: data.role_name };
  } catch (error) {
    // GitHub answers 404 for a user who is not a collaborator at all.
    if (hasStatus(error, 404)) return { permission: "none", roleName: "none" };
    throw error;
  }
}

/** True when `username` has write, maintain or admin permission on the repository. */
export async function canRunCommands(octokit: ProbotOctokit, owner: string, repo: string, username: string): Promise<boolean> {
  const role = await repositoryRole(octokit, owner, repo, username);
  return WRITER_ROLES.has(role.roleName) || WRITER_ROLES.has(role.permission);
}
