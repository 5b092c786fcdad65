/**
 * Time from a writer's review submitted (the signed `pull_request_review` POST) to the
 * revision's implementer started, with the App as a real server against the fake GitHub.
 * Baseline in the same run: a `story` label to the first run's implementer started, on the same
 * repository. Each pair is one story: its label (baseline), then, once it ended, a review on its
 * pull request (subject); the revision cannot come before its story, so the order is fixed.
 *
 *   node --import tsx bench/revision.ts [--stories 4]
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { deliverWebhook, pullRequestReviewSubmittedPayload, signedDelivery, startFakeGitHub, type FakeGitHub } from "../test/support/fake-github/index.js";
import { startApp, type RunningApp } from "../test/e2e/app-process.js";
import { eventually } from "../test/support/poll.js";
import { AGENT_SCRIPT, harnessYml, labelNewIssue, OWNER, reportsDelivered, sandboxGrant, storyPull } from "../test/e2e/scenario.js";
import { formatPaired, summarisePairs } from "./lib/paired.js";

/** The scripted agent, whose implementer notes each start in the markers folder and, on a revision, changes a file. */
const AGENT = AGENT_SCRIPT.replace(
  "    echo hello > feature.txt ;;",
  [
    '    echo started >> "$markers/implementer.log"',
    "    echo hello > feature.txt",
    '    if grep -q "^# Reviser" "$HARNESS_PROMPT_FILE"; then date +%s%N >> revised.txt; fi ;;',
  ].join("\n"),
).replace('if [ -n "$markers" ] && [ ! -f "$markers/started" ]; then', "if false; then");

function starts(markers: string): number {
  const file = join(markers, "implementer.log");
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;
}

async function implementerStarted(markers: string, before: number): Promise<void> {
  await eventually("the implementer to start", () => (starts(markers) > before ? true : undefined), 120_000);
}

async function storyHead(fake: FakeGitHub, issue: number, notHead?: string): Promise<string> {
  return eventually(
    "the story to end",
    async () => {
      const head = await fake.branchHead(OWNER, "widgets", `harness/story-${issue}`);
      if (!head || head === notHead) return undefined;
      const story = fake.state.checkRuns.filter((run) => run.repo === `${OWNER}/widgets` && run.name === "harness / story" && run.headSha === head).at(-1);
      return story?.status === "completed" ? head : undefined;
    },
    180_000,
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { stories: { type: "string", default: "4" } } });
  const stories = Math.max(1, Number(values.stories));
  const root = mkdtempSync(join(tmpdir(), "harness-bench-revision-"));
  const home = join(root, "home");
  const markers = join(root, "markers");
  mkdirSync(markers);
  const fake = await startFakeGitHub();
  let app: RunningApp | undefined;
  try {
    await fake.addRepository({
      owner: OWNER,
      name: "widgets",
      files: { "README.md": "# widgets\n", ".harness-test/agent.sh": AGENT, ".github/harness.yml": harnessYml({ markers }) },
    });
    fake.setPermission(OWNER, "widgets", "writer", "write");
    app = await startApp({ fake, home, workDir: root, env: sandboxGrant(markers) });
    const labelMs: number[] = [];
    const reviewMs: number[] = [];
    const before = loadavg()[0] ?? 0;
    // One story first, unmeasured: the repository cache fills.
    for (let rep = -1; rep < stories; rep += 1) {
      let count = starts(markers);
      const labelled = performance.now();
      const { number } = await labelNewIssue(fake, app, "widgets", `Story ${rep + 2}`);
      await implementerStarted(markers, count);
      const label = performance.now() - labelled;
      const head = await storyHead(fake, number);
      await reportsDelivered(home);

      const pull = storyPull(fake, "widgets", number);
      if (!pull) throw new Error(`story ${number} has no pull request`);
      const { review } = fake.submitReview(OWNER, "widgets", pull.number, {
        user: "writer",
        state: "CHANGES_REQUESTED",
        body: "Please revise.",
        commitId: head,
      });
      const delivery = signedDelivery(
        "pull_request_review",
        await pullRequestReviewSubmittedPayload(fake, { owner: OWNER, name: "widgets", review }),
        fake.webhookSecret,
      );
      count = starts(markers);
      const reviewed = performance.now();
      await deliverWebhook(app.webhookUrl, delivery);
      await implementerStarted(markers, count);
      const revise = performance.now() - reviewed;
      await storyHead(fake, number, head);
      await reportsDelivered(home);
      if (rep >= 0) {
        labelMs.push(label);
        reviewMs.push(revise);
      }
    }
    const result = summarisePairs(reviewMs, labelMs, { before, after: loadavg()[0] ?? 0 });
    console.log(formatPaired("review → revision's implementer started ÷ label → first implementer started", result, { max: 1.2 }));
  } finally {
    await app?.stop();
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
