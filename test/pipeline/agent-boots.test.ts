/**
 * The agents of a task in their first seconds: the baseline's steps wait while one has been
 * launched, until it ended, went idle or its start time passed. Shown by order, never by timing:
 * nothing settles the wait but the agent's end, the CPU readings given, or the time given.
 */
import { exec } from "../../src/exec/index.js";
import { AgentBoots, IDLE_CPU_MS, type BootClock } from "../../src/pipeline/agent-boots.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

const HOUR = 3_600_000;
/** A clock whose start lasts `startMs` and whose CPU readings never change (an agent busy for ever is given below). */
const clockOf = (startMs: number, cpuMs: BootClock["cpuMs"] = () => 0): BootClock => ({ startMs, sampleMs: 1, cpuMs });

/** CPU readings of a process that used `readings[i]` ms at its i-th reading, busy for ever after the last. */
function scripted(readings: readonly number[]): { clock: BootClock; reads: () => number; pids: number[] } {
  let read = 0;
  const pids: number[] = [];
  const cpuMs = (pid: number): number => {
    pids.push(pid);
    read += 1;
    return readings[read - 1] ?? 1_000_000 * read;
  };
  return { clock: clockOf(HOUR, cpuMs), reads: () => read, pids };
}

/** Runs a process through src/exec to its end: many turns of the event loop, in which a settled wait would have been seen. */
const someTurns = async (): Promise<void> => {
  await exec(["/bin/sh", "-c", "true"], { cwd: makeTempDir() });
};

it("settles at once when no agent is starting", async () => {
  await expect(new AgentBoots().settled()).resolves.toBeUndefined();
});

it("waits for a launched agent until it ended", async () => {
  const boots = new AgentBoots(clockOf(HOUR));
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
  const boots = new AgentBoots(clockOf(1));
  boots.launched();
  await expect(boots.settled()).resolves.toBeUndefined();
});

it("waits for every agent starting, one launched while it waited included", async () => {
  const boots = new AgentBoots(clockOf(HOUR));
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

it("waits while the agent's processes use the CPU, and no longer once they are idle", async () => {
  // Busy for three windows (50 ms each), then less than IDLE_CPU_MS in the fourth.
  const cpu = scripted([0, 50, 100, 150, 150 + IDLE_CPU_MS - 1]);
  const boots = new AgentBoots(cpu.clock);
  const boot = boots.launched();
  let readsAtSettle = -1;
  const settled = boots.settled().then(() => (readsAtSettle = cpu.reads()));
  boot.spawned(42);
  await settled;
  expect(readsAtSettle).toBe(5);
  expect(new Set(cpu.pids)).toEqual(new Set([42]));
  // Once idle, the agent's CPU is read no more.
  await someTurns();
  expect(cpu.reads()).toBe(5);
});

it("counts the agent as starting while its CPU use stays at the idle line", async () => {
  const cpu = scripted([0, IDLE_CPU_MS, 2 * IDLE_CPU_MS, 2 * IDLE_CPU_MS]);
  const boots = new AgentBoots(cpu.clock);
  const boot = boots.launched();
  let readsAtSettle = -1;
  const settled = boots.settled().then(() => (readsAtSettle = cpu.reads()));
  boot.spawned(7);
  await settled;
  expect(readsAtSettle).toBe(4);
});

it("waits for a spawned agent that stays busy until it ended", async () => {
  const cpu = scripted([]);
  const boots = new AgentBoots(cpu.clock);
  const boot = boots.launched();
  const order: string[] = [];
  const settled = boots.settled().then(() => order.push("settled"));
  boot.spawned(9);
  while (cpu.reads() < 5) await someTurns();
  expect(order).toEqual([]);
  order.push("ended");
  boot.ended();
  await settled;
  expect(order).toEqual(["ended", "settled"]);
  const reads = cpu.reads();
  await someTurns();
  expect(cpu.reads()).toBe(reads);
});

it("ends the start when the agent's process is gone", async () => {
  const boots = new AgentBoots(clockOf(HOUR, () => undefined));
  boots.launched().spawned(1);
  await expect(boots.settled()).resolves.toBeUndefined();
});

it("ends the start when the agent's process goes while it starts", async () => {
  const readings: (number | undefined)[] = [0, 500, undefined];
  let read = 0;
  const boots = new AgentBoots(clockOf(HOUR, () => (read < readings.length ? readings[read++] : 1_000_000 * ++read)));
  boots.launched().spawned(5);
  await boots.settled();
  expect(read).toBe(3);
});

it("reads a fallback agent's process from its spawn, and nothing once the start is over", async () => {
  const pids: number[] = [];
  const boots = new AgentBoots(
    clockOf(HOUR, (pid) => {
      pids.push(pid);
      return pid === 1 ? 1_000 * pids.length : 0;
    }),
  );
  const boot = boots.launched();
  const settled = boots.settled();
  boot.spawned(1);
  while (pids.length < 3) await someTurns();
  boot.spawned(2);
  await settled;
  const afterSecond = pids.slice(pids.indexOf(2));
  expect(afterSecond.every((pid) => pid === 2)).toBe(true);
  boot.spawned(3);
  await someTurns();
  expect(pids).not.toContain(3);
});

it("reads an agent's CPU only while somebody waits for its start", async () => {
  const cpu = scripted([0, 50, 100, 100]);
  const boots = new AgentBoots(cpu.clock);
  const boot = boots.launched();
  boot.spawned(11);
  // Nobody waits: the agent's start is counted, its processes are not read.
  await someTurns();
  await someTurns();
  expect(cpu.reads()).toBe(0);
  await boots.settled();
  expect(cpu.reads()).toBe(4);
  // A seat launched once nobody waits any more is not read either, and ends its start by itself.
  const later = boots.launched();
  later.spawned(12);
  await someTurns();
  expect(cpu.reads()).toBe(4);
  later.ended();
  await expect(boots.settled()).resolves.toBeUndefined();
  expect(cpu.pids).toEqual([11, 11, 11, 11]);
});

it("reads an agent spawned while somebody waits from its spawn", async () => {
  const cpu = scripted([0, 500, 500]);
  const boots = new AgentBoots(cpu.clock);
  const boot = boots.launched();
  let readsAtSettle = -1;
  const settled = boots.settled().then(() => (readsAtSettle = cpu.reads()));
  await someTurns();
  expect(cpu.reads()).toBe(0);
  boot.spawned(13);
  await settled;
  expect(readsAtSettle).toBe(3);
});
