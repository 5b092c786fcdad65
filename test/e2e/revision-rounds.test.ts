/**
 * End to end, more revision rounds through the running App against the strict fake GitHub (the
 * setup of revision.test.ts, shared): triggers that arrive while a round runs are batched into
 * one next round; the same CI failure right after a fix round stops the loop; `/harness revise`
 * by a writer starts a round and by a reader does not.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { jest } from "@jest/globals";
import { eventually } from "../support/poll.js";
import { commentAs, filesContaining, loggedDelivery, OWNER, reportsDelivered, sandboxGrant, storyRunsDir } from "./scenario.js";
import { addRevisingRepo, useRevisionApp } from "./revision-scenario.js";

jest.setTimeout(400_000);

describe("revision rounds end to end: batching, the repeated failure, /harness revise", () => {
  const scenario = useRevisionApp({
    label: "revision-rounds",
    env: (root) => {
      // The first implementer of a story does not wait (`started`); a round whose prompt says HOLD-ROUND does.
      mkdirSync(join(root, "markers"));
      writeFileSync(join(root, "markers", "started"), "");
      return sandboxGrant(join(root, "markers"));
    },
  });
  const { fake, home, completedStory, nextHead, review, suite, statusComment, fileAt } = scenario;
  const markers = (): string => join(scenario.root(), "markers");

  /** The App's replies on the pull request that tell a trigger it was batched. */
  const batchedReplies = (name: string, pullNumber: number): number =>
    fake.state.commentsOn(OWNER, name, pullNumber).filter((comment) => comment.body.includes("batched into its next revision round")).length;

  it("two reviews while a round runs → one next round whose prompt has both, and no third", async () => {
    const name = "batched";
    await addRevisingRepo(fake, name, { markers: markers() });
    const { issue, pull, head: first } = await completedStory(name);
    fake.setPermission(OWNER, name, "writer", "write");
    fake.setPermission(OWNER, name, "maintainer", "write");

    const held = await review(name, pull, "writer", first, [{ path: "feature.txt", line: 1, body: "HOLD-ROUND NEEDS: first.txt" }]);
    expect(held.outcome).toMatchObject({ action: "enqueued" });
    await eventually("round 1 to be running", () => (existsSync(join(markers(), "held")) ? true : undefined), 180_000);

    const a = await review(name, pull, "writer", first, [{ path: "feature.txt", line: 1, body: "NEEDS: second.txt" }], "Second thought.");
    const b = await review(name, pull, "maintainer", first, [{ path: "feature.txt", line: 1, body: "NEEDS: third.txt" }], "And this.");
    expect(a.outcome).toMatchObject({ action: "enqueued" });
    expect(b.outcome).toMatchObject({ action: "enqueued" });
    await eventually("both triggers told they were batched", () => (batchedReplies(name, pull.number) === 2 ? true : undefined));
    writeFileSync(join(markers(), "go"), "");

    const second = await nextHead(name, issue, first);
    expect(await fileAt(name, second, "first.txt")).toBe("fixed\n");
    expect(await fileAt(name, second, "second.txt")).toBeUndefined();
    const third = await nextHead(name, issue, second);
    expect(await fileAt(name, third, "second.txt")).toBe("fixed\n");
    expect(await fileAt(name, third, "third.txt")).toBe("fixed\n");
    await reportsDelivered(home());

    // One round asked for both: a prompt holds both reviews' comments.
    const prompts = filesContaining(storyRunsDir(home(), name, issue), ["NEEDS: second.txt"]).filter((path) => basename(path).startsWith("prompt"));
    expect(prompts.length).toBeGreaterThan(0);
    for (const prompt of prompts) expect(readFileSync(prompt, "utf8")).toContain("NEEDS: third.txt");
    const status = statusComment(name, pull.number);
    expect(status).toMatch(/\| 1 \| review by @\u200B?writer \| verified \|/);
    expect(status).toMatch(/\| 2 \| review by @\u200B?writer; review by @\u200B?maintainer \| verified \|/);
    expect(status).not.toMatch(/\| 3 \|/);
    expect(await fake.branchHead(OWNER, name, `harness/story-${issue}`)).toBe(third);
    // Each comment of the batched round got its thread reply.
    for (const comment of [...a.comments, ...b.comments]) {
      expect(fake.state.reviewComments.some((reply) => reply.inReplyTo === comment.id && reply.user === fake.botLogin)).toBe(true);
    }
  });

  it("the same CI check failing with the same log signature right after a fix round stops the loop, and the status comment says so", async () => {
    const name = "repeated";
    await addRevisingRepo(fake, name);
    const { issue, pull, head: first } = await completedStory(name);
    const failure = { name: "lint", conclusion: "failure" as const, summary: "lint failed", log: "2026-01-01T00:00:00Z error: NEEDS: lint.txt\n" };

    expect(await suite(name, { app: "github-actions", headSha: first, runs: [failure] })).toMatchObject({ action: "enqueued" });
    const second = await nextHead(name, issue, first);
    expect(await fileAt(name, second, "lint.txt")).toBe("fixed\n");

    // The fix did not fix it: the same check fails the same way (another time stamp) on the new head.
    const again = { ...failure, log: "2026-01-01T00:05:00Z error: NEEDS: lint.txt\n" };
    expect(await suite(name, { app: "github-actions", headSha: second, runs: [again] })).toMatchObject({ action: "enqueued" });
    await eventually("the status comment to say the loop stopped", () =>
      statusComment(name, pull.number).includes("The same CI check failed with the same log signature right after fix round 1") ? true : undefined,
    );
    await reportsDelivered(home());
    expect(await fake.branchHead(OWNER, name, `harness/story-${issue}`)).toBe(second);
    expect(statusComment(name, pull.number)).toMatch(/\| 1 \| CI: github-actions \\?\(lint\\?\) \| verified \|/);
    expect(statusComment(name, pull.number)).not.toMatch(/\| 2 \|/);
  });

  it("/harness revise <text> by a writer → a round with that text; by a reader → refused, no round", async () => {
    const name = "commanded";
    await addRevisingRepo(fake, name);
    const { issue, pull, head: first } = await completedStory(name);
    fake.setPermission(OWNER, name, "reader", "read");
    fake.setPermission(OWNER, name, "writer", "write");

    const byReader = await commentAs(fake, scenario.app(), name, pull.number, "reader", "/harness revise add it, NEEDS: reader.txt");
    expect(await loggedDelivery(scenario.app(), byReader.deliveryId)).toMatchObject({ action: "replied", reason: "not-permitted" });
    const byWriter = await commentAs(fake, scenario.app(), name, pull.number, "writer", "/harness revise add the file, NEEDS: asked.txt");
    expect(await loggedDelivery(scenario.app(), byWriter.deliveryId)).toMatchObject({ action: "enqueued" });

    const second = await nextHead(name, issue, first);
    expect(await fileAt(name, second, "asked.txt")).toBe("fixed\n");
    expect(await fileAt(name, second, "reader.txt")).toBeUndefined();
    await reportsDelivered(home());
    const status = statusComment(name, pull.number);
    expect(status).toMatch(/\| 1 \| `?\/harness revise`? by @\u200B?writer \| verified \|/);
    expect(status).not.toMatch(/\| 2 \|/);
    expect(await fake.branchHead(OWNER, name, `harness/story-${issue}`)).toBe(second);
  });
});
