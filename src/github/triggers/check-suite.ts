/**
 * `check_suite.completed`: another App's failing suite (GitHub Actions, any CI) on the story
 * branch's current head starts a fix round. The rule is "another App's suite on our head", never
 * the delivery's sender: the sender is usually the App's own bot, which pushed the commit.
 */
import { FAILING_CONCLUSIONS, freezeSuite } from "./feedback.js";
import { currentPull, enqueueRevision, storyOfPull } from "./revise.js";
import { scopeOf, type TriggerDeps, type TriggerEvent, type TriggerOutcome } from "./deps.js";

/**
 * Queues a fix round with the suite's failing runs frozen into the job. The App's own suites,
 * suites that did not fail, suites on no story's pull request, and suites on a head the story
 * has left (stale: a newer commit is already there) start nothing.
 */
export async function handleCheckSuite(context: TriggerEvent<"check_suite.completed">, deps: TriggerDeps): Promise<TriggerOutcome> {
  const { payload } = context;
  const suite = payload.check_suite;
  const app = suite.app as { id?: number; slug?: string } | null | undefined;
  // Who the App is must be known to tell its own suites apart; until then nothing is acted on.
  if (deps.appId === undefined && deps.appSlug === undefined) return { action: "ignored", reason: "own-identity-unknown" };
  if (!app || (deps.appId !== undefined && app.id === deps.appId) || (deps.appSlug !== undefined && app.slug === deps.appSlug)) {
    return { action: "ignored", reason: "own-suite" };
  }
  if (!FAILING_CONCLUSIONS.has(suite.conclusion ?? "")) return { action: "ignored", reason: "not-failing" };
  const pulls = (suite.pull_requests ?? []) as { number: number; head: { ref: string; sha: string; repo?: { id: number } | null } }[];
  const candidate = pulls.find((pull) => storyOfPull(pull, payload.repository.id) !== undefined);
  if (!candidate) return { action: "ignored", reason: "no-story-pull-request" };
  const scope = scopeOf(context.octokit, context.id, payload.repository, payload.installation, deps);
  if (!scope) return { action: "ignored", reason: "no-installation" };
  scope.eventKey = `check_suite/${suite.id}/${suite.head_sha}`;
  const octokit = await scope.octokit();
  // The head as it is now, not as the payload saw it: a suite on a commit the story has moved past is stale.
  const pull = await currentPull(octokit, scope, candidate.number);
  const storyNumber = storyOfPull(pull, payload.repository.id);
  if (storyNumber === undefined) return { action: "ignored", reason: "no-story-pull-request" };
  if (pull.state !== "open") return { action: "ignored", reason: "pull-request-closed" };
  if (pull.head.sha !== suite.head_sha) return { action: "ignored", reason: "stale-head" };
  const slug = app.slug ?? "ci";
  const frozen = await freezeSuite(octokit, { owner: scope.owner, repo: scope.repo }, { id: suite.id, app: slug, headSha: suite.head_sha });
  if (frozen.checks.length === 0) return { action: "ignored", reason: "no-failing-run" };
  // Admitted by the rule above, not by a person: the job names the App whose suite failed (a bot, which the runner does not re-check).
  return enqueueRevision(scope, storyNumber, pull.number, { triggers: [frozen] }, `${slug}[bot]`, deps);
}
