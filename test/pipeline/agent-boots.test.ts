/**
 * The agents of a task in their first seconds: the baseline's steps wait while one has been
 * launched, until it ended or its start time passed. Shown by order, never by timing: nothing
 * settles the wait but the agent's end or the time given.
 */
import { exec } from "../../src/exec/index.js";
import { AgentBoots } from "../../src/pipeline/agent-boots.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

/** Runs a process through src/exec to its end: many turns of the event loop, in which a settled wait would have been seen. */
const someTurns = async (): Promise<void> => {
  await exec(["/bin/sh", "-c", "true"], { cwd: makeTempDir() });
};

it("settles at once when no agent is starting", async () => {
  await expect(new AgentBoots().settled()).resolves.toBeUndefined();
});

it("waits for a launched agent until it ended", async () => {
  const boots = new AgentBoots(3_600_000);
  const boot = boots.launched();
  const order: string[] = [];
  const settled = boots.settled().then(() => order.push("settled"));
  await someTurns();
  expect(order).toEqual([]);
  order.push("ended");
  boot.ended();
  await settled;
  expect(order).toEqual(["ended", "settled"]);
});

it("waits no longer than the agent's start time", async () => {
  const boots = new AgentBoots(1);
  boots.launched();
  await expect(boots.settled()).resolves.toBeUndefined();
});

it("waits for every agent starting, one launched while it waited included", async () => {
  const boots = new AgentBoots(3_600_000);
  const first = boots.launched();
  const order: string[] = [];
  const settled = boots.settled().then(() => order.push("settled"));
  const second = boots.launched();
  first.ended();
  await someTurns();
  expect(order).toEqual([]);
  second.ended();
  await settled;
  expect(order).toEqual(["settled"]);
});
