export {
  git,
  gitBytes,
  gitResult,
  splitNul,
  isWorkTree,
  GitError,
  GIT_HARDENING,
  DIFF_HARDENING,
  HARNESS_IDENTITY,
  type GitOptions,
  type GitFailureKind,
} from "./git.js";
