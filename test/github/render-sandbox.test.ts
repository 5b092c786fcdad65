import { describe, expect, it } from "@jest/globals";
import { renderCleanCloneCheck, renderStoryCheck, renderVerifierCheck } from "../../src/github/report/index.js";
import type { HistoryEvent } from "../../src/pipeline/events.js";
import { cleanClone, gate, replay, started } from "./story-events.js";

const withPolicy = (event: HistoryEvent, policy: { sandboxed: boolean; network: boolean }): HistoryEvent => ({ ...event, policy }) as HistoryEvent;

describe("the check runs say which policy repository code ran under", () => {
  it("names the suite gate's and the clean clone's sandbox and network", () => {
    const snapshot = replay([
      started(),
      withPolicy(gate(1, 0), { sandboxed: true, network: false }),
      withPolicy(cleanClone(1, 0), { sandboxed: true, network: true }),
    ]);
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

describe("the check runs say which network networked steps had", () => {
  it("names a step's own namespace, the egress proxy, or the host's network", () => {
    const own = replay([{ ...started(), network: "own" } as HistoryEvent, withNet(gate(1, 0), "own"), withNet(cleanClone(1, 0), "egress")]);
    expect(renderVerifierCheck(own).summary).toContain(
      "**Ran:** sandboxed, network on (a namespace of its own: no host loopback, link-local or private addresses)",
    );
    expect(renderCleanCloneCheck(own).summary).toContain("out only through the egress proxy to the hosts of HARNESS_EGRESS_ALLOW");
    expect(renderStoryCheck(own).summary).toContain("**Network:** provisioning and agents ran sandboxed with the network on (a namespace of its own");
    expect(renderStoryCheck(own).title).not.toContain("host network");
  });

  it("marks a story run with HARNESS_SANDBOX_NET=host loudly, in the title and the summary", () => {
    const snapshot = replay([{ ...started(), network: "host" } as HistoryEvent, withNet(gate(1, 0), "host")]);
    const story = renderStoryCheck(snapshot);
    expect(story.title).toMatch(/ \(host network\)$/);
    expect(story.summary).toContain("⚠️ **Host network:** the operator runs this App with `HARNESS_SANDBOX_NET=host`");
    expect(renderVerifierCheck(snapshot).summary).toContain("network on: **the host's network** (HARNESS_SANDBOX_NET=host)");
  });
});

function withNet(event: HistoryEvent, net: "own" | "egress" | "host"): HistoryEvent {
  return { ...event, policy: { sandboxed: true, network: true, net } } as HistoryEvent;
}
