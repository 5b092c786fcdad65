/** The story adapter: what the runner asks of GitHub for one story (installation auth, start branch, draft pull request, its outbox), and the App's identity. */
export { storyGitHub, type StoryGitHub, type StoryGitHubArgs, type ReporterTarget } from "./story-github.js";
export { authenticateInstallation, GIT_TOKEN_PERMISSIONS, STORY_API_PERMISSIONS, type AppOctokit, type Installation } from "./installation.js";
export { gitAuthEnv } from "./git-auth.js";
export { openStoryOutbox, outboxDir, type PushWork, type StoryOutboxArgs } from "./outbox.js";
export { HARNESS_CONFIG_PATH } from "./repo-config.js";
export type { OpenStoryPull } from "./pull.js";
export { startRefusal, StoryStartRefusedError, type CommitSignature, type StartBranch, type StartCommitArgs } from "./git-data.js";
export { readAppIdentity } from "./app-identity.js";
export { untilGitHubAnswers, githubDownDelay, GITHUB_DOWN_POLICY, type GitHubDownOptions, type Sleep } from "./github-down.js";
export { readRounds, noteUnderRounds, replyOnThread, type PullPlace } from "./revisions.js";
