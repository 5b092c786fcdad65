import { describe, expect, it } from "@jest/globals";
import { renderCleanCloneCheck, renderStoryCheck, renderVerifierCheck } from "../../src/github/index.js";
import type { HistoryEvent } from "../../src/pipeline/events.js";
import { cleanClone, gate, replay, started } from "./story-events.js";

const withPolicy = (event: HistoryEvent, policy: { sandboxed: boolean; network: boolean }): HistoryEvent => ({ ...event, policy }) as HistoryEvent;

describe("the check runs say which policy repository code ran under", () => {
  it("names the suite gate's and the clean clone's sandbox and network", () => {
    const snapshot = replay([started(), withPolicy(gate(1, 0), { sandboxed: true, network: false }), withPolicy(cleanClone(1, 0), { sandboxed: true, network: true })]);
    expect(renderVerifierCheck(snapshot).summary).toContain("**Ran:** sandboxed, network off");
    expect(renderCleanCloneCheck(snapshot).summary).toContain("**Ran:** sandboxed, network on");
    expect(renderStoryCheck(snapshot).title).not.toContain("unsandboxed");
  });

  it("marks a story run with HARNESS_SANDBOX=off as unsandboxed, in the title and the summary", () => {
    const run = { ...started(), unsandboxed: true } as HistoryEvent;
    const snapshot = replay([run, withPolicy(gate(1, 0), { sandboxed: false, network: true })]);
    const story = renderStoryCheck(snapshot);
    expect(story.title).toMatch(/ \(unsandboxed\)$/);
    expect(story.summary).toContain("**Unsandboxed:**");
    expect(renderVerifierCheck(snapshot).summary).toContain("**unsandboxed** (HARNESS_SANDBOX=off), network on");
  });
});
