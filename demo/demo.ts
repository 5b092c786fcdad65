/**
 * `harness demo`: the App against the fake GitHub the tests use, with a sample repository and
 * a scripted agent, printing what a maintainer would see on GitHub at each step. No network,
 * no account: the fake serves the REST API, webhooks are signed here, git runs over the
 * fake's smart HTTP, and the App is the compiled `harness serve` in its own process.
 *
 * Two stories: one that completes, and one that blocks because its issue is unclear, is
 * clarified by the maintainer and re-admitted with `/harness retry-blocked`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeGitHub, type FakeGitHub } from "../test/support/fake-github/index.js";
import { startApp, type RunningApp } from "../test/e2e/app-process.js";
import { eventually } from "../test/support/poll.js";
import { OWNER, checksOn, commentAs, labelNewIssue, reportsDelivered, storyEnd, storyPull } from "../test/e2e/scenario.js";
import { renderMaintainerView, stateInWords, type ViewedCheck } from "./view.js";

/**
 * The scripted agent: the implementer writes `greeting.txt` only when the story says "say
 * hello", so an issue that does not say what it wants is sent back after every attempt.
 */
const AGENT = `#!/bin/sh
case "$HARNESS_STAGE" in
  implementer) if grep -qi "say hello" "$HARNESS_PROMPT_FILE"; then echo "Hello!" > greeting.txt; fi ;;
  tester) mkdir -p tests && printf 'test -s greeting.txt\\n' > tests/greeting.sh ;;
  verifier) printf '{"verdict":"pass","findings":["greeting.txt says hello"]}\\n' > "$HARNESS_ARTIFACT_DIR/verdict.json" ;;
  documenter) printf '\\nThe app greets its users (greeting.txt).\\n' >> README.md ;;
esac
`;
const CONFIG = ["agent:", "  command: sh .demo/agent.sh", "test:", "  command: sh tests/greeting.sh", "max_attempts: 2", ""].join("\n");
const REPO = "greeter";

const say = (text: string): void => {
  process.stdout.write(`${text}\n`);
};

/** What GitHub shows on the story's pull request right now: the PR, its head's check runs, the comments. */
async function view(fake: FakeGitHub, issue: number): Promise<string> {
  const pull = storyPull(fake, REPO, issue);
  const head = pull ? await fake.branchHead(OWNER, REPO, pull.headRef) : null;
  const checks: ViewedCheck[] = head ? [...checksOn(fake, REPO, head).values()] : [];
  const comments = fake.state.comments.filter(
    (comment) => comment.repo === `${OWNER}/${REPO}` && (comment.issueNumber === issue || comment.issueNumber === pull?.number),
  );
  return renderMaintainerView({ pull, checks, comments });
}

async function completedStory(fake: FakeGitHub, app: RunningApp, home: string): Promise<void> {
  say("\n━━ 1. A maintainer labels issue “Greet the user” with `story` ━━");
  const story = await labelNewIssue(fake, app, REPO, "Greet the user", OWNER, "Say hello to the user in greeting.txt.");
  say(`GitHub delivered the webhook; the App answered ${story.status} at once and queued the story.`);
  await eventually("the draft pull request", () => storyPull(fake, REPO, story.number));
  say("\n── While it runs: a draft pull request appears ──");
  say(await view(fake, story.number));
  await storyEnd(fake, REPO, story.number);
  await reportsDelivered(home);
  await eventually("ready for review", () => (storyPull(fake, REPO, story.number)?.draft === false ? true : undefined));
  say("\n── When it ends: the pull request is ready for review ──");
  say(await view(fake, story.number));
}

async function blockedThenRetried(fake: FakeGitHub, app: RunningApp, home: string): Promise<void> {
  say("\n━━ 2. A story whose issue does not say what it wants ━━");
  const story = await labelNewIssue(fake, app, REPO, "Make it friendlier", OWNER, "Make the app friendlier.");
  const issue = fake.state.issues.find((candidate) => candidate.repo === `${OWNER}/${REPO}` && candidate.number === story.number);
  const end = await storyEnd(fake, REPO, story.number);
  await reportsDelivered(home);
  say(
    `Every attempt was sent back; the story ${end.story.conclusion === "action_required" ? "is blocked and needs your action" : `ended ${stateInWords(end.story.conclusion ?? "?")}`}:`,
  );
  say(await view(fake, story.number));

  say("\n━━ 3. The maintainer clarifies the issue and comments `/harness retry-blocked` ━━");
  if (issue) {
    issue.body = "Say hello: write a greeting to greeting.txt.";
    issue.updatedAt = new Date().toISOString();
  }
  const pull = storyPull(fake, REPO, story.number);
  const runsBefore = fake.state.checkRuns.length;
  await commentAs(fake, app, REPO, pull?.number ?? story.number, OWNER, "/harness retry-blocked");
  // The re-admitted run posts new check runs; it has ended once its story check run completes.
  await eventually(
    "the re-admitted story to end",
    () => fake.state.checkRuns.slice(runsBefore).find((run) => run.name === "harness / story" && run.status === "completed"),
    120_000,
  );
  await reportsDelivered(home);
  say(await view(fake, story.number));
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "harness-demo-"));
  const fake = await startFakeGitHub();
  let app: RunningApp | undefined;
  try {
    await fake.addRepository({ owner: OWNER, name: REPO, files: { "README.md": "# greeter\n", ".demo/agent.sh": AGENT, ".github/harness.yml": CONFIG } });
    say(`story-harness demo — a fake GitHub at ${fake.apiUrl}, repository ${OWNER}/${REPO}, a scripted agent.`);
    const home = join(root, "home");
    app = await startApp({ fake, home, workDir: root });
    say(`The App (harness serve) listens at ${app.webhookUrl}.`);
    await completedStory(fake, app, home);
    await blockedThenRetried(fake, app, home);
    say("\nThat is the whole loop. Install the App on a real repository: see the README.");
  } finally {
    await app?.stop();
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
