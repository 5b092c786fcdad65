import { exec, type ExecResult } from "../exec/index.js";
import { gitErrorOf } from "./git-errors.js";

/**
 * Flags every git call carries: repository code is untrusted, so its hooks, fsmonitor and
 * credential helpers never run from a harness call.
 */
export const GIT_HARDENING: readonly string[] = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "credential.helper=",
  "-c",
  "protocol.ext.allow=never",
  "-c",
  "color.ui=false",
  // The operator's attribute file is as foreign to a story as the operator's config.
  "-c",
  "core.attributesFile=/dev/null",
  // Never into a nested repository: its config, attributes and hooks are the agent's to write.
  "-c",
  "submodule.recurse=false",
  "-c",
  "status.submoduleSummary=false",
];

/**
 * For porcelain commands that compare a working tree (`status`, `diff`, `commit`): a gitlink's
 * nested repository is not asked whether it is dirty, since asking runs `git status` in it,
 * under its own config and attributes. Not in {@link GIT_HARDENING}: it also hides a moved
 * gitlink from tree-to-tree diffs, which a scope check must see. `git add` ignores it; stage
 * with `stageAll` (git-stage.ts) instead.
 */
export const NO_SUBMODULE_STATUS: readonly string[] = ["-c", "diff.ignoreSubmodules=all"];

/**
 * For git calls in repositories the App owns (its repository caches and their worktrees): no
 * automatic gc or maintenance after a commit or a fetch, which would start two more git
 * processes each time (`git maintenance run --auto`, then `git gc --auto`). The runner keeps
 * each cache in shape itself (runner/cache-maintenance.ts).
 */
export const NO_AUTO_MAINTENANCE: readonly string[] = ["-c", "gc.auto=0", "-c", "maintenance.auto=false"];

/** Flags for any diff git prints: no external drivers, no text conversion, no colour. */
export const DIFF_HARDENING: readonly string[] = ["--no-ext-diff", "--no-textconv", "--no-color"];

/** The identity of commits the harness makes. */
export const HARNESS_IDENTITY = {
  GIT_AUTHOR_NAME: "story-harness",
  GIT_AUTHOR_EMAIL: "story-harness@users.noreply.github.com",
  GIT_COMMITTER_NAME: "story-harness",
  GIT_COMMITTER_EMAIL: "story-harness@users.noreply.github.com",
} as const;

export interface GitOptions {
  cwd: string;
  /** The repository must only be read: no optional locks, no index stat refresh. */
  readOnly?: boolean;
  /** Extra environment values (for example credentials passed through GIT_CONFIG_* or an identity). */
  env?: Readonly<Record<string, string>>;
  input?: string | Buffer;
  timeoutMs?: number;
  logPath?: string;
  /** Most bytes of stdout kept (exec's default otherwise); `stdoutTruncated` says when more came. */
  captureBytes?: number;
}

/**
 * What every git call of the App runs with. Repository code cannot write the cache's config,
 * refs or hooks (the sandbox shows them read-only), and the App also never reads what lives
 * outside a repository: no system or global config of the App's user (where `insteadOf`,
 * `pushurl` or filter drivers could wait), and no replace refs, which could swap the objects a
 * story starts from.
 */
export const GIT_ENV: Readonly<Record<string, string>> = {
  GIT_TERMINAL_PROMPT: "0",
  GIT_ASKPASS: "/bin/false",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_NO_REPLACE_OBJECTS: "1",
};

function gitEnv(options: GitOptions): Record<string, string> {
  const set: Record<string, string> = { ...GIT_ENV, ...options.env };
  if (options.readOnly) set.GIT_OPTIONAL_LOCKS = "0";
  return set;
}

/** Runs git hardened and returns the raw result, whatever the exit code. */
export function gitResult(args: readonly string[], options: GitOptions): Promise<ExecResult> {
  return exec(["git", ...GIT_HARDENING, ...args], {
    cwd: options.cwd,
    env: { set: gitEnv(options) },
    captureStdout: true,
    tailLines: 40,
    ...(options.input !== undefined ? { input: options.input } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.logPath !== undefined ? { logPath: options.logPath } : {}),
    ...(options.captureBytes !== undefined ? { captureBytes: options.captureBytes } : {}),
  });
}

/** Runs git hardened; returns stdout as a Buffer, throws a `GitError` (git-errors.ts) on failure. */
export async function gitBytes(args: readonly string[], options: GitOptions): Promise<Buffer> {
  const result = await gitResult(args, options);
  if (result.exitCode !== 0 || result.timedOut) throw gitErrorOf(args, result);
  return result.stdout ?? Buffer.alloc(0);
}

/** Runs git hardened; returns stdout as text with the final newline removed. */
export async function git(args: readonly string[], options: GitOptions): Promise<string> {
  return (await gitBytes(args, options)).toString("utf8").replace(/\n$/, "");
}

/** Splits NUL-terminated output (`-z`) into its entries. */
export function splitNul(bytes: Buffer): string[] {
  return bytes
    .toString("utf8")
    .split("\0")
    .filter((entry) => entry !== "");
}

/** True when `dir` is inside a git working tree. */
export async function isWorkTree(dir: string): Promise<boolean> {
  // Stryker disable next-line BooleanLiteral: rev-parse --is-inside-work-tree takes no optional lock either way; readOnly says what the call promises
  const result = await gitResult(["rev-parse", "--is-inside-work-tree"], { cwd: dir, readOnly: true });
  return result.exitCode === 0 && result.stdout?.toString().trim() === "true";
}
