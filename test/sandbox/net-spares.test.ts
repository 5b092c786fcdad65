/**
 * Spare network namespaces: a step joins one made with its own rules, each is used once, the
 * walls are the same as in a namespace made for the step, and a spare whose holder died is
 * never joined. Each test waits for the spare to be ready (sparesMade) before the step that
 * must use it, so which path a step takes is decided by the test, not by timing.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runInStepScope, treeCpuMs } from "../../src/exec/index.js";
import { dropSpares, readySpares, sparesMade, sparesTaken } from "../../src/sandbox/index.js";
import { afterStep, endQuiet, holdQuiet, quietHolds } from "../../src/sandbox/net-spares.js";
import { exec } from "../../src/exec/index.js";
import { until } from "../support/poll.js";
import { box, connectLine, hostListener, networkedStep } from "../support/net-step.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);
beforeEach(dropSpares);
afterAll(dropSpares);

/** Prints the namespace the step is in (bubblewrap keeps a networked step's namespace). */
const nsLine = 'echo "ns=$(readlink /proc/self/ns/net)"';
const nsOf = (out: string): string | undefined => /^ns=(net:\[\d+\])$/m.exec(out)?.[1];

describe.each(["pasta", "slirp4netns"] as const)("spare namespaces with %s", (kind) => {
  it("the next step joins a spare made with its rules, behind the same walls, and each spare serves one step", async () => {
    const host = await hostListener();
    try {
      const sandbox = box({}, kind);
      // No spare exists yet, so the first step makes its own namespace. (A namespace's identity
      // is an inode number the kernel reuses once it is freed: the spare made after the first
      // step may carry the number the first step's namespace had, so spares are told apart by
      // their holder's pid.)
      expect(readySpares()).toHaveLength(0);
      const first = await networkedStep(sandbox, nsLine);
      expect(nsOf(first.out)).toBeDefined();
      // It leaves two (SPARE_STOCK): steps come two in a row.
      await sparesMade();
      const [spare, other] = readySpares();
      expect(readySpares()).toHaveLength(2);

      const second = await networkedStep(
        sandbox,
        [
          nsLine,
          connectLine("host-loopback", "127.0.0.1", host.port),
          connectLine("metadata", "169.254.169.254", 80),
          connectLine("private10", "10.1.2.3", 80),
          "ip rule del pref 200 2>/dev/null && echo lifted || echo kept",
          "ip route get 203.0.113.7 >/dev/null 2>&1 && echo public-routed || echo public-blocked",
        ].join("; "),
      );
      expect(second.net).toBe("own");
      expect(nsOf(second.out)).toBe(spare?.netNs);
      expect(second.out).toMatch(/^host-loopback ECONNREFUSED$/m);
      expect(host.connections()).toBe(0);
      expect(second.out).toMatch(/^metadata EACCES$/m);
      expect(second.out).toMatch(/^private10 EACCES$/m);
      expect(second.out).toMatch(/^kept$/m);
      expect(second.out).toMatch(/^public-routed$/m);

      // Taking the spare started the next one: the third step gets a namespace nobody used.
      await sparesMade();
      const ready = readySpares();
      expect(ready).toHaveLength(2);
      expect(ready.map((one) => one.pid)).not.toContain(spare?.pid);
      const third = await networkedStep(sandbox, nsLine);
      expect(nsOf(third.out)).toBe(other?.netNs);
    } finally {
      host.server.close();
    }
  });

  it("is made ahead of a story's first networked step when asked (warmNetwork), and that step joins it", async () => {
    const sandbox = box({}, kind);
    expect(readySpares()).toHaveLength(0);
    await sandbox.warmNetwork();
    await sparesMade();
    const [warm] = readySpares();
    expect(warm).toBeDefined();
    const first = await networkedStep(sandbox, nsLine);
    expect(first.net).toBe("own");
    expect(nsOf(first.out)).toBe(warm?.netNs);
  });

  it("makes as many spares as the steps it is warmed for (provisioning, then the first agent), and each of them joins one of its own", async () => {
    const sandbox = box({}, kind);
    const taken = sparesTaken();
    await sandbox.warmNetwork(2);
    await sparesMade();
    const warm = readySpares();
    expect(warm).toHaveLength(2);
    expect(new Set(warm.map((spare) => spare.pid)).size).toBe(2);
    const provision = await networkedStep(sandbox, nsLine);
    const agent = await networkedStep(sandbox, nsLine);
    expect([nsOf(provision.out), nsOf(agent.out)]).toEqual(warm.map((spare) => spare.netNs));
    expect(sparesTaken()).toBe(taken + 2);
    // Warming again tops the spares up to the number asked for, never beyond it (the two steps left two).
    await sandbox.warmNetwork(1);
    await sparesMade();
    expect(readySpares()).toHaveLength(2);
    await sandbox.warmNetwork(3);
    await sparesMade();
    expect(readySpares()).toHaveLength(3);
  });

  it("an agent step launched the moment the last one ended joins a spare too: a step leaves two", async () => {
    const sandbox = box({}, kind);
    // A provisioning step leaves two spares (made beside it), the way a story's worktree does before its first seat.
    await networkedStep(sandbox, "true");
    await sparesMade();
    const ready = readySpares();
    expect(ready).toHaveLength(2);
    const taken = sparesTaken();
    const dir = makeTempDir();
    const agent = (): ReturnType<typeof sandbox.shell> =>
      sandbox.shell(nsLine, { cwd: dir, captureStdout: true, timeoutMs: 60_000 }, { purpose: "agent", network: true, writable: [dir] });
    // The first agent's own refill waits until an agent idles; the second starts before it can.
    const first = await agent();
    const second = await agent();
    expect(sparesTaken()).toBe(taken + 2);
    expect([nsOf(first.stdout?.toString() ?? ""), nsOf(second.stdout?.toString() ?? "")]).toEqual(ready.map((spare) => spare.netNs));
  });

  it("a step off the critical path (a niced scope: the baseline) makes its own namespace and leaves the spare to the step the story waits for", async () => {
    const sandbox = box({}, kind);
    const taken = sparesTaken();
    await sandbox.warmNetwork();
    await sparesMade();
    const [warm] = readySpares();
    const niced = await runInStepScope({ niceness: 10 }, () => networkedStep(sandbox, nsLine));
    expect(niced.net).toBe("own");
    expect(nsOf(niced.out)).toBeDefined();
    expect(sparesTaken()).toBe(taken);
    expect(readySpares().map((spare) => spare.pid)).toEqual([warm?.pid]);
    const seat = await networkedStep(sandbox, nsLine);
    expect(nsOf(seat.out)).toBe(warm?.netNs);
    expect(sparesTaken()).toBe(taken + 1);
  });

  it("a step that starts while its spare is still being made waits for it and joins it, instead of making a namespace of its own", async () => {
    const sandbox = box({}, kind);
    const taken = sparesTaken();
    // warmNetwork returns once the spare is begun, not once it is ready.
    await sandbox.warmNetwork();
    const step = await networkedStep(sandbox, nsLine);
    expect(step.net).toBe("own");
    expect(nsOf(step.out)).toBeDefined();
    expect(sparesTaken()).toBe(taken + 1);
  });

  /** A sandbox whose one spare is ready (`warm`), and a folder whose `release` file ends a step that waits for it. */
  const warmedSpare = async (): Promise<{
    sandbox: ReturnType<typeof box>;
    warm: ReturnType<typeof readySpares>[number] | undefined;
    dir: string;
    release: string;
  }> => {
    const sandbox = box({}, kind);
    await sandbox.warmNetwork();
    await sparesMade();
    const [warm] = readySpares();
    const dir = makeTempDir();
    return { sandbox, warm, dir, release: join(dir, "release") };
  };

  it("begins the next spare while a long agent step that took one still runs, once the agent idles", async () => {
    const { sandbox, warm, dir, release } = await warmedSpare();
    // The step waits, nearly idle, until the test sees the next spare ready, which only a refill begun beside it can give.
    const step = sandbox.shell(
      `${nsLine}; while ! test -f ${release}; do sleep 0.5; done`,
      { cwd: dir, captureStdout: true, timeoutMs: 120_000 },
      { purpose: "agent", network: true, writable: [dir] },
    );
    await until("the next spare is ready while the step runs", () => readySpares().some((spare) => spare.pid !== warm?.pid));
    writeFileSync(release, "");
    const result = await step;
    expect(nsOf(result.stdout?.toString() ?? "")).toBe(warm?.netNs);
  });

  it("an agent step that keeps its CPU busy begins the next spare only at its end, and a provisioning step at once", async () => {
    const { sandbox, warm, dir, release } = await warmedSpare();
    let pid: number | undefined;
    // A shell loop of builtins: a core's worth of CPU until released, so the agent never idles.
    const step = sandbox.shell(
      `while ! test -f ${release}; do :; done`,
      { cwd: dir, timeoutMs: 120_000, onSpawn: (spawned) => (pid = spawned) },
      { purpose: "agent", network: true, writable: [dir] },
    );
    // Past many of the watch's windows, and past the second at which a spare used to be begun (the loop's CPU time is
    // at most its wall time), no spare was begun: one begun then would be ready by now.
    await until("the step has used 1.5 s of CPU", () => pid !== undefined && (treeCpuMs(pid) ?? 0) >= 1500);
    expect(readySpares()).toEqual([]);
    writeFileSync(release, "");
    await step;
    await sparesMade();
    expect(readySpares().filter((spare) => spare.pid !== warm?.pid)).toHaveLength(2);
    // A provisioning step that takes one of them begins the next beside it, busy or not.
    const before = readySpares().map((spare) => spare.pid);
    const provisioned = sandbox.shell(
      `while ! test -f ${join(dir, "release2")}; do :; done`,
      { cwd: dir, timeoutMs: 120_000 },
      { purpose: "provision", network: true, writable: [dir] },
    );
    await until("the provisioning step's next spare is ready while it runs", () => readySpares().some((spare) => !before.includes(spare.pid)));
    writeFileSync(join(dir, "release2"), "");
    await provisioned;
  });

  it("hands a step in a spare its standard input", async () => {
    const sandbox = box({}, kind);
    await networkedStep(sandbox, "true");
    await sparesMade();
    const [spare] = readySpares();
    expect(spare).toBeDefined();
    const dir = makeTempDir();
    const result = await sandbox.run(
      ["/bin/sh", "-c", "cat"],
      { cwd: dir, captureStdout: true, timeoutMs: 60_000, input: "the prompt\n" },
      { purpose: "agent", network: true, writable: [dir] },
    );
    expect(result.stdout?.toString()).toBe("the prompt\n");
    // It ran in the spare: that one is no longer offered (the next, begun as it was taken, may be).
    expect(readySpares().map((ready) => ready.pid)).not.toContain(spare?.pid);
  });

  it("a step whose rules differ does not take a spare made for other rules", async () => {
    const host = await hostListener();
    try {
      await networkedStep(box({}, kind), "true");
      await sparesMade();
      const [plain] = readySpares();
      const loopback = kind === "pasta" ? "127.0.0.1" : "10.0.2.2";
      const opened = await networkedStep(
        box({ HARNESS_NET_ALLOW: `127.0.0.1:${host.port}` }, kind),
        [nsLine, connectLine("allowed", loopback, host.port)].join("; "),
      );
      expect(nsOf(opened.out)).not.toBe(plain?.netNs);
      expect(opened.out).toMatch(/^allowed reached$/m);
      // The plain spare is still there for a step with its rules.
      expect(readySpares().map((spare) => spare.netNs)).toContain(plain?.netNs);
    } finally {
      host.server.close();
    }
  });
});

it("a spare whose holder died is not joined, even before the App hears of it: the step makes its own namespace", async () => {
  const host = await hostListener();
  try {
    const sandbox = box({}, "slirp4netns");
    await networkedStep(sandbox, "true");
    await sparesMade();
    const [spare] = readySpares();
    if (spare?.group === undefined) throw new Error("no spare was made");
    // The spare's launcher is stopped, so it can neither reap its dead holder nor tell the App:
    // the holder's pid stays taken by a zombie, which is in no namespace at all.
    process.kill(spare.group, "SIGSTOP");
    process.kill(spare.pid, "SIGKILL");
    // The signal is delivered at once, but the process dies a moment later: wait until it is a zombie.
    await until("the spare's holder is a zombie", () => / Z /.test(readFileSync(`/proc/${spare.pid}/stat`, "utf8")));
    const step = await networkedStep(sandbox, [nsLine, connectLine("host-loopback", "127.0.0.1", host.port)].join("; "));
    expect(nsOf(step.out)).toBeDefined();
    expect(nsOf(step.out)).not.toBe(spare.netNs);
    expect(step.out).toMatch(/^host-loopback ECONNREFUSED$/m);
    expect(host.connections()).toBe(0);
    process.kill(-spare.group, "SIGCONT");
  } finally {
    host.server.close();
  }
});

describe("work a step leaves (ending its spare, making the next) and an agent's start", () => {
  /** Runs a process through src/exec to its end: many turns of the event loop, in which work let go would have run. */
  const someTurns = async (): Promise<void> => {
    await exec(["/bin/sh", "-c", "true"], { cwd: makeTempDir() });
  };

  it("runs once the step's result is back when no agent is starting", async () => {
    const ran: string[] = [];
    afterStep(() => ran.push("work"));
    expect(ran).toEqual([]);
    await sparesMade();
    expect(ran).toEqual(["work"]);
  });

  it("waits while an agent holds it back, and runs once the last hold is released", async () => {
    const ran: string[] = [];
    const first = holdQuiet(3_600_000);
    const second = holdQuiet(3_600_000);
    afterStep(() => ran.push("first"));
    afterStep(() => ran.push("second"));
    await someTurns();
    expect(ran).toEqual([]);
    first.idle();
    await someTurns();
    expect(ran).toEqual([]);
    // Released twice is released once.
    first.idle();
    second.idle();
    await sparesMade();
    expect(ran).toEqual(["first", "second"]);
    expect(quietHolds()).toBe(0);
  });

  it("an agent that ended lets it go only after the gap, and one that starts in the gap keeps it waiting", async () => {
    const ran: string[] = [];
    // A gap of an hour, so that only the next agent's idling can end it here.
    const first = holdQuiet(3_600_000, 3_600_000);
    afterStep(() => ran.push("work"));
    first.end();
    // The gap runs: the turns of the event loop in which an idle release would have let the work go pass without it.
    expect(quietHolds()).toBe(0);
    await someTurns();
    expect(ran).toEqual([]);
    // The next agent starts within the gap, as a story's next seat does: the work waits for it now.
    const next = holdQuiet(3_600_000);
    await someTurns();
    expect(ran).toEqual([]);
    next.idle();
    await sparesMade();
    expect(ran).toEqual(["work"]);
    // With no agent starting, the gap passes by itself (sparesMade waits for the work put off).
    const last = holdQuiet(3_600_000, 1);
    afterStep(() => ran.push("after the gap"));
    last.end();
    await sparesMade();
    expect(ran).toEqual(["work", "after the gap"]);
  });

  it("a hold goes by itself after its longest time", async () => {
    const ran: string[] = [];
    holdQuiet(1);
    afterStep(() => ran.push("work"));
    await sparesMade();
    expect(ran).toEqual(["work"]);
    expect(quietHolds()).toBe(0);
  });

  it("a busy agent step holds it back until its end; a provisioning step does not hold it", async () => {
    const sandbox = box({}, "slirp4netns");
    const dir = makeTempDir();
    endQuiet();
    const busyUntil = (file: string): string => `touch ${join(dir, `${file}.started`)}; while ! test -f ${join(dir, file)}; do :; done`;
    const provision = sandbox.shell(busyUntil("provision"), { cwd: dir, timeoutMs: 120_000 }, { purpose: "provision", network: true, writable: [dir] });
    await until("the provisioning step runs", () => existsSync(join(dir, "provision.started")));
    expect(quietHolds()).toBe(0);
    writeFileSync(join(dir, "provision"), "");
    await provision;
    let pid: number | undefined;
    const agent = sandbox.shell(
      busyUntil("agent"),
      { cwd: dir, timeoutMs: 120_000, onSpawn: (spawned) => (pid = spawned) },
      { purpose: "agent", network: true, writable: [dir] },
    );
    await until("the agent step runs", () => existsSync(join(dir, "agent.started")));
    const ran: string[] = [];
    afterStep(() => ran.push("work"));
    // Several of the idle watch's windows later (the loop's CPU time is at most its wall time), still held.
    await until("the agent has used 500 ms of CPU", () => pid !== undefined && (treeCpuMs(pid) ?? 0) >= 500);
    expect(quietHolds()).toBe(1);
    expect(ran).toEqual([]);
    writeFileSync(join(dir, "agent"), "");
    await agent;
    expect(quietHolds()).toBe(0);
    await sparesMade();
    expect(ran).toEqual(["work"]);
  });

  it("an agent step that idles (waits on its model) releases it while it still runs", async () => {
    const sandbox = box({}, "slirp4netns");
    const dir = makeTempDir();
    endQuiet();
    const ran: string[] = [];
    const agent = sandbox.shell(
      `while ! test -f ${join(dir, "release")}; do sleep 0.5; done`,
      { cwd: dir, timeoutMs: 120_000 },
      { purpose: "agent", network: true, writable: [dir] },
    );
    // The hold is taken as the step is prepared, before anything is launched.
    expect(quietHolds()).toBe(1);
    afterStep(() => ran.push("work"));
    await until("the work put off ran beside the idle agent", () => ran.length === 1);
    expect(quietHolds()).toBe(0);
    writeFileSync(join(dir, "release"), "");
    await agent;
  });

  it("a clean stop (dropSpares) does not wait for a busy agent", async () => {
    const ran: string[] = [];
    holdQuiet(3_600_000);
    afterStep(() => ran.push("work"));
    await dropSpares();
    expect(ran).toEqual(["work"]);
    expect(quietHolds()).toBe(0);
  });
});
