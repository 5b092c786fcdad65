/**
 * End to end: after the story's pull request opens, a writer's review and another App's failing
 * CI start revision rounds through the running App, against the strict fake GitHub, with a
 * scripted agent that does what the reviser prompt names (`NEEDS: <file>` lines).
 */
import { jest } from "@jest/globals";
import { eventually } from "../support/poll.js";
import { CHECK_NAMES, checksOn, OWNER, reportsDelivered, storyPull } from "./scenario.js";
import { addRevisingRepo, useRevisionApp } from "./revision-scenario.js";

jest.setTimeout(300_000);

describe("revision rounds end to end", () => {
  const { fake, home, completedStory, nextHead, review, suite, statusComment, fileAt, isAncestor } = useRevisionApp({ label: "revision" });

  it("a writer's review with an inline comment → a verified revision commit on the same branch, a thread reply, round 1 in the Revisions table; a reader's review does nothing; an Actions failure whose log names the problem → a fix commit; stale and own suites are ignored", async () => {
    const name = "revised";
    await addRevisingRepo(fake, name);
    const { issue, pull, head: first } = await completedStory(name);

    // (b) A reader's review starts nothing and gets no reply.
    fake.setPermission(OWNER, name, "reader", "read");
    const readers = await review(name, pull, "reader", first, [{ path: "feature.txt", line: 1, body: "NEEDS: reader.txt" }]);
    expect(readers.outcome).toMatchObject({ action: "ignored", reason: "not-permitted" });

    // (a) A writer's review with an inline comment.
    fake.setPermission(OWNER, name, "writer", "write");
    const writers = await review(name, pull, "writer", first, [{ path: "feature.txt", line: 1, body: "Also add it. NEEDS: polite.txt" }]);
    expect(writers.outcome).toMatchObject({ action: "enqueued" });
    const second = await nextHead(name, issue, first);
    expect(await isAncestor(name, first, second)).toBe(true);
    expect(await fileAt(name, second, "polite.txt")).toBe("fixed\n");
    expect(await fileAt(name, second, "reader.txt")).toBeUndefined();
    const checks = checksOn(fake, name, second);
    for (const check of CHECK_NAMES) expect([check, checks.get(check)?.conclusion]).toEqual([check, "success"]);
    const reply = fake.state.reviewComments.find((comment) => comment.inReplyTo === writers.comments[0]!.id);
    expect(reply?.user).toBe(fake.botLogin);
    expect(reply?.body).toContain("made the file asked for");
    expect(fake.state.reviewComments.some((comment) => comment.inReplyTo === readers.comments[0]!.id)).toBe(false);
    expect(statusComment(name, pull.number)).toMatch(/### Revisions[\s\S]*\| 1 \| review by @\u200B?writer \| verified \|/);
    expect(storyPull(fake, name, issue)?.state).toBe("open");

    // (e) The App's own suite, and a failing suite on the head the story has left, start nothing.
    const own = await suite(name, { app: fake.appSlug, appId: fake.appId, headSha: second, runs: [{ name: "harness / story", conclusion: "failure" }] });
    expect(own).toMatchObject({ action: "ignored", reason: "own-suite" });
    const stale = await suite(name, {
      app: "github-actions",
      headSha: first,
      runs: [{ name: "build", conclusion: "failure", log: "error: NEEDS: stale.txt\n" }],
    });
    expect(stale).toMatchObject({ action: "ignored" });
    expect(["no-story-pull-request", "stale-head"]).toContain(stale.reason);

    // (c) GitHub Actions fails on the head, its job log naming the problem: a fix commit.
    const failing = await suite(name, {
      app: "github-actions",
      headSha: second,
      runs: [
        {
          name: "lint",
          conclusion: "failure",
          summary: "lint failed",
          log: "\u001b[31m2026-01-01T00:00:00Z error: lint.txt is missing (NEEDS: lint.txt)\u001b[0m\n",
        },
      ],
    });
    expect(failing).toMatchObject({ action: "enqueued" });
    const third = await nextHead(name, issue, second);
    expect(await isAncestor(name, second, third)).toBe(true);
    expect(await fileAt(name, third, "lint.txt")).toBe("fixed\n");
    expect(await fileAt(name, third, "stale.txt")).toBeUndefined();
    expect(checksOn(fake, name, third).get("harness / story")?.conclusion).toBe("success");
    expect(statusComment(name, pull.number)).toMatch(/\| 2 \| CI: github-actions \\?\(lint\\?\) \| verified \|/);
  });

  it("iterate.max_rounds: 1 → a second trigger starts nothing and the status comment says iterate.max_rounds is spent", async () => {
    const name = "bounded";
    await addRevisingRepo(fake, name, { extraConfig: "iterate:\n  max_rounds: 1\n" });
    const { issue, pull, head: first } = await completedStory(name);
    fake.setPermission(OWNER, name, "writer", "write");
    await review(name, pull, "writer", first, [{ path: "feature.txt", line: 1, body: "NEEDS: one.txt" }]);
    const second = await nextHead(name, issue, first);

    const again = await review(name, pull, "writer", second, [{ path: "feature.txt", line: 1, body: "NEEDS: two.txt" }]);
    expect(again.outcome).toMatchObject({ action: "enqueued" });
    await eventually("the status comment to say the rounds are spent", () =>
      statusComment(name, pull.number).includes("`iterate.max_rounds` is spent") ? true : undefined,
    );
    await reportsDelivered(home());
    expect(await fake.branchHead(OWNER, name, `harness/story-${issue}`)).toBe(second);
    expect(statusComment(name, pull.number)).toMatch(/\| 1 \| review by @\u200B?writer \| verified \|/);
    expect(statusComment(name, pull.number)).not.toMatch(/\| 2 \|/);
  });
});
