/**
 * The CPU time of a process tree, read from /proc: a stat line's four CPU fields, a living
 * descendant's time, an ended child's time kept through its parent, and a process that is gone.
 * Real processes: each busy shell spins until its own stat shows the CPU it must have used,
 * so nothing here depends on how fast the machine is.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cpuMsOfStat, exec, terminateGroup, treeCpuMs, watchIdle } from "../../src/exec/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

/** A shell script that spins until its own utime is at least five clock ticks (50 ms), then writes its pid to `spun` (whole: written aside, then renamed). */
const SPIN = 'while :; do read -r l < /proc/$$/stat; set -- ${l##*) }; [ "${12}" -ge 5 ] && break; done\necho $$ > spun.part && mv spun.part spun\n';

/** Starts `script` under /bin/sh through src/exec in a folder holding `files`; its pid, its folder, and its end. */
async function start(script: string, files: Record<string, string> = {}): Promise<{ pid: number; dir: string; ended: Promise<unknown> }> {
  const dir = makeTempDir();
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  let pid = 0;
  let ended: Promise<unknown> = Promise.resolve();
  await new Promise<void>((resolve) => {
    ended = exec(["/bin/sh", "-c", script], {
      cwd: dir,
      timeoutMs: 120_000,
      onSpawn: (child) => {
        pid = child;
        resolve();
      },
    });
  });
  return { pid, dir, ended };
}

/** Waits for a file the script writes (a condition, not a time). */
async function until(path: string): Promise<void> {
  while (!existsSync(path)) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("cpuMsOfStat", () => {
  it("sums utime, stime, cutime and cstime after a command name holding spaces and parentheses", () => {
    const line = "123 (a b) c) S 1 123 123 0 -1 4194304 100 0 0 0 7 3 2 1 20 0 1 0 5 6 7\n";
    expect(cpuMsOfStat(line)).toBe((7 + 3 + 2 + 1) * 10);
  });

  it("reads fields of many digits, and nothing of a field that is not all digits", () => {
    const line = (utime: string) => `9 (node) S 1 9 9 0 -1 4194304 100 0 0 0 ${utime} 250 0 0 20 0 11 0`;
    expect(cpuMsOfStat(line("1234"))).toBe((1234 + 250) * 10);
    expect(cpuMsOfStat(line("12x"))).toBeUndefined();
    expect(cpuMsOfStat(line("x12"))).toBeUndefined();
  });

  it("answers nothing for a line that is not a stat line", () => {
    expect(cpuMsOfStat("")).toBeUndefined();
    expect(cpuMsOfStat("9 node S 1 9 9 0 -1 4194304 100 0 0 0 7 3 2 1 20 0 1 0")).toBeUndefined();
    expect(cpuMsOfStat("123 (sh) S 1 2 3")).toBeUndefined();
    expect(cpuMsOfStat("123 (sh) S 1 123 123 0 -1 4194304 100 0 0 0 x 3 2 1 20")).toBeUndefined();
  });
});

describe("treeCpuMs", () => {
  it("counts a living descendant's CPU, which its parent's own stat does not hold", async () => {
    const run = await start("sh ./spin.sh & wait", { "spin.sh": `${SPIN}exec sleep 60\n` });
    try {
      await until(join(run.dir, "spun"));
      const spinner = Number(readFileSync(join(run.dir, "spun"), "utf8").trim());
      const spinnerMs = cpuMsOfStat(readFileSync(`/proc/${spinner}/stat`, "latin1")) ?? 0;
      expect(spinnerMs).toBeGreaterThanOrEqual(50);
      expect(cpuMsOfStat(readFileSync(`/proc/${run.pid}/stat`, "latin1"))).toBeLessThan(spinnerMs);
      expect(treeCpuMs(run.pid)).toBeGreaterThanOrEqual(spinnerMs);
    } finally {
      await terminateGroup(run.pid, 1000);
      await run.ended;
    }
  });

  it("keeps an ended child's CPU, through the parent that waited for it", async () => {
    const run = await start("sh ./spin.sh; touch reaped; exec sleep 60", { "spin.sh": SPIN });
    try {
      await until(join(run.dir, "reaped"));
      expect(treeCpuMs(run.pid)).toBeGreaterThanOrEqual(50);
    } finally {
      await terminateGroup(run.pid, 1000);
      await run.ended;
    }
  });

  it("answers nothing for a process that is gone", async () => {
    const run = await start("true");
    await run.ended;
    expect(treeCpuMs(run.pid)).toBeUndefined();
  });
});

describe("watchIdle", () => {
  /** CPU readings `readings[i]` at the i-th read, then busy for ever; and the pids read. */
  const scripted = (readings: readonly (number | undefined)[]): { cpuMs: (pid: number) => number | undefined; pids: number[] } => {
    const pids: number[] = [];
    return {
      pids,
      cpuMs: (pid) => {
        pids.push(pid);
        return pids.length <= readings.length ? readings[pids.length - 1] : 1_000_000 * pids.length;
      },
    };
  };
  const turns = (): Promise<void> => exec(["/bin/sh", "-c", "true"], { cwd: makeTempDir() }).then(() => undefined);

  it("calls back once, at the first window under the idle line, and reads nothing after", async () => {
    const cpu = scripted([0, 30, 60, 60 + 19]);
    let calls = 0;
    const idle = new Promise<void>((resolve) => watchIdle(7, () => (calls += 1) && resolve(), { sampleMs: 1, idleCpuMs: 20, cpuMs: cpu.cpuMs }));
    await idle;
    expect(cpu.pids).toEqual([7, 7, 7, 7]);
    await turns();
    expect(calls).toBe(1);
    expect(cpu.pids).toHaveLength(4);
  });

  it("calls back at once for a process that is gone, and when it goes while watched", async () => {
    let gone = 0;
    watchIdle(8, () => (gone += 1), { sampleMs: 1, idleCpuMs: 20, cpuMs: () => undefined });
    expect(gone).toBe(1);
    const cpu = scripted([0, 500, undefined]);
    await new Promise<void>((resolve) => watchIdle(9, resolve, { sampleMs: 1, idleCpuMs: 20, cpuMs: cpu.cpuMs }));
    expect(cpu.pids).toHaveLength(3);
  });

  it("reads nothing and calls nothing once cancelled", async () => {
    const cpu = scripted([]);
    let calls = 0;
    const watch = watchIdle(10, () => (calls += 1), { sampleMs: 1, idleCpuMs: 20, cpuMs: cpu.cpuMs });
    while (cpu.pids.length < 3) await turns();
    watch.cancel();
    const reads = cpu.pids.length;
    await turns();
    expect(cpu.pids).toHaveLength(reads);
    expect(calls).toBe(0);
  });
});
