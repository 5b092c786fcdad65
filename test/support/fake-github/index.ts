/**
 * A strict fake of GitHub Enterprise Server for end-to-end tests: REST under `/api/v3`, GraphQL
 * at `/api/graphql`, git smart HTTP at `/<owner>/<name>.git`, all on loopback.
 */
export { FakeGitHub, startFakeGitHub, UnexpectedRequestsError, type AddedRepository, type FakeGitHubOptions } from "./fake.js";
export type { RepositorySpec } from "./repos.js";
export { fakeOctokit } from "./client.js";
export type { IssuedToken } from "./auth.js";
export type { HookDeliveryRecord } from "./hook.js";
export { GIT_TOKEN_USER } from "./git-http.js";
export { DEFAULT_PUSH_REFUSAL, type FailureWindow, type FailureWindowSpec, type InjectedFailure } from "./failures.js";
export type { RequestGate, RequestGateSpec } from "./gates.js";
export { CHECK_RUN_TEXT_LIMIT_BYTES, REST_ROUTES } from "./routes/index.js";
export { OPENAPI_DESCRIPTION, compileRequestValidators } from "./openapi-validate.js";
export {
  signedDelivery,
  deliverWebhook,
  examplePayload,
  issuesLabeledPayload,
  issueCommentCreatedPayload,
  checkRunRequestedActionPayload,
  type SignedDelivery,
} from "./webhooks.js";
export { pullRequestReviewSubmittedPayload, checkSuiteCompletedPayload } from "./review-webhooks.js";
export type { ReviewSpec, SuiteSpec, ForeignRunSpec } from "./review-control.js";
export type {
  FakeState,
  RepoRole,
  RepoRecord,
  IssueRecord,
  CommentRecord,
  ReactionRecord,
  LabelRecord,
  PullRecord,
  CheckRunRecord,
  CheckRunOutput,
  ReviewRecord,
  ReviewCommentRecord,
  CheckSuiteRecord,
  CheckAnnotationRecord,
  RecordedRequest,
  UnexpectedRequest,
} from "./state.js";
