/**
 * Git's own words, read in this one place. Git reports failures on stderr in prose; every other
 * room asks for the typed kind (and its failure class) instead of matching that prose itself, so
 * a new git wording is taught here once.
 */
import type { ExecResult } from "../exec/index.js";
import type { FailureClass } from "../failure/index.js";

/** Why a git call failed, translated from git's exit and stderr. */
export type GitFailureKind =
  /** The server refused the push for good: a pre-receive hook, a protected branch, push protection. */
  | "push-refused"
  /** The remote's branch is not an ancestor of what was pushed (`! [rejected] … (non-fast-forward)`). */
  | "non-fast-forward"
  | "not-a-repository"
  | "auth"
  /** A revision, ref, path or remote that does not exist. */
  | "not-found"
  /** Another git process holds a lock file (`index.lock`, a ref's `.lock`). */
  | "lock"
  /** The remote could not be reached, or the connection broke. */
  | "network"
  | "conflict"
  | "timeout"
  /** A local clone's object copy raced another git process (see {@link classifyGitFailure}). */
  | "object-copy"
  | "failed";

/** What the classifier reads of a finished git call. */
export type GitOutcome = Pick<ExecResult, "exitCode" | "timedOut" | "tail">;

// Each pattern is git's (or GitHub's, through git) wording; the first match in the order below wins.
const REFUSED = /\[remote rejected\]|pre-receive hook declined|push declined|GH0\d\d:|protected branch/i;
const NON_FAST_FORWARD = /! \[rejected\]|non-fast-forward|\(fetch first\)/i;
// A local clone copies the source's object folder file by file; a file that another git
// process renames or removes in the meantime (its `tmp_obj_*`, `tmp_pack_*`) fails the copy.
const OBJECT_COPY = /failed to copy file to|failed to create link|failed to iterate over/i;
const NOT_A_REPOSITORY = /not a git repository/i;
const AUTH = /Authentication failed|could not read Username|Permission denied \(publickey|\b40[13]\b/i;
const LOCK = /\.lock'?: File exists|Another git process seems to be running/i;
const NOT_FOUND = /not found|does not exist|unknown revision|couldn't find remote ref|bad revision|not a valid object name|invalid reference/i;
const NETWORK =
  /Could not resolve host|Failed to connect|Connection (refused|reset|timed out)|Operation timed out|remote end hung up unexpectedly|RPC failed|early EOF|unexpected disconnect|returned error: 5\d\d/i;
const CONFLICT = /patch does not apply|conflict|already exists/i;

/**
 * The kind of a failed git call, from its exit and what it said. A refusal is told before
 * anything else, since GitHub's refusal text may quote paths or ids that other patterns match.
 */
export function classifyGitFailure(outcome: GitOutcome): GitFailureKind {
  if (outcome.timedOut) return "timeout";
  const text = outcome.tail;
  if (OBJECT_COPY.test(text)) return "object-copy";
  if (REFUSED.test(text)) return "push-refused";
  if (NON_FAST_FORWARD.test(text)) return "non-fast-forward";
  if (NOT_A_REPOSITORY.test(text)) return "not-a-repository";
  if (AUTH.test(text)) return "auth";
  if (LOCK.test(text)) return "lock";
  if (NOT_FOUND.test(text)) return "not-found";
  if (NETWORK.test(text)) return "network";
  if (CONFLICT.test(text)) return "conflict";
  return "failed";
}

/** True for the kinds that mean the remote will not take this push as it is: retrying the same push cannot help. */
export function isPushRefusal(kind: GitFailureKind): boolean {
  return kind === "push-refused" || kind === "non-fast-forward";
}

/**
 * True when the server answered the push with HTTP 403 (git: "The requested URL returned error:
 * 403"): the token, minted for this very push, may not write there (a missing permission, a rule
 * on the branch). Another try with another fresh token gets the same answer; 401 (a token that
 * expired on the way) is not this.
 */
export function isForbiddenPush(error: { kind: GitFailureKind; stderr: string }): boolean {
  return error.kind === "auth" && /returned error: 403\b/.test(error.stderr);
}

/** The failure class a git failure of this kind blocks a story with. */
export function gitFailureClass(kind: GitFailureKind): FailureClass {
  return isPushRefusal(kind) ? "push-refused" : "git-failed";
}

/** The server's words about a refused push: the `remote:` lines and the rejection, without git's noise. */
export function refusalMessage(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => /^remote:|rejected|declined|^error:/i.test(line.trim()));
  return (lines.length > 0 ? lines : stderr.split("\n")).join("\n").trim().slice(0, 4000);
}

/** A failed git call as a typed error: its kind, its failure class, the command and git's words. */
export class GitError extends Error {
  readonly failureClass: FailureClass;
  constructor(
    readonly kind: GitFailureKind,
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(" ")} failed (${kind}, exit ${exitCode ?? "none"}): ${stderr.trim().split("\n").slice(-3).join(" / ")}`);
    this.name = "GitError";
    this.failureClass = gitFailureClass(kind);
  }
}

/** The {@link GitError} of a finished call that failed (for callers of `gitResult` that judge the exit themselves). */
export function gitErrorOf(args: readonly string[], outcome: GitOutcome): GitError {
  return new GitError(classifyGitFailure(outcome), args, outcome.exitCode, outcome.tail);
}
