/**
 * What a server allocates and retains, counted rather than timed, so the figure holds on a
 * loaded machine. A server child calls {@link meterAllocations}; the bench asks it for a
 * window's figures with SIGUSR2 ({@link readAllocWindow}) before and after a burst.
 *
 * Bytes allocated in a window are exact whatever the GC did meanwhile: the heap's growth over
 * the window plus what every collection in it freed (V8's GC profiler gives the heap's size
 * before and after each one). What scavenges promoted into the old generation is what makes the
 * mark-compacts; what survives a full collection at the window's end is what the window retained.
 * The full collection at each window's end (`--expose-gc`) lies outside both windows.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { GCProfiler, getHeapStatistics } from "node:v8";

/** One window's figures, written by the server for the bench. */
export interface AllocWindow {
  seq: number;
  /** Bytes allocated on the JavaScript heap during the window. */
  allocatedBytes: number;
  /** Bytes scavenges moved into the old generation. */
  promotedBytes: number;
  scavenges: number;
  markCompacts: number;
  /** Time spent in collections (ms). */
  gcMs: number;
  /** The heap's size after a full collection at the window's end (bytes). */
  liveBytes: number;
}

interface HeapSpace {
  spaceName: string;
  spaceUsedSize: number;
}
interface GcEntry {
  gcType: string;
  cost: number;
  beforeGC: { heapStatistics: { usedHeapSize: number }; heapSpaceStatistics: HeapSpace[] };
  afterGC: { heapStatistics: { usedHeapSize: number }; heapSpaceStatistics: HeapSpace[] };
}

const oldSpace = (spaces: HeapSpace[]): number =>
  spaces.filter((space) => space.spaceName === "old_space").reduce((sum, space) => sum + space.spaceUsedSize, 0);

/**
 * Server side: meters windows; on SIGUSR2 ends the current one and writes its figures to `file`
 * (atomically). Needs `--expose-gc`. With `heapProfile`, also samples allocations by function
 * (collected objects included) and writes the profile there when the process exits.
 */
export async function meterAllocations(file: string, heapProfile?: string): Promise<void> {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error("the allocation meter needs node's --expose-gc");
  let seq = 0;
  let profiler = new GCProfiler();
  profiler.start();
  let usedAtStart = getHeapStatistics().used_heap_size;
  process.on("SIGUSR2", () => {
    const usedAtEnd = getHeapStatistics().used_heap_size;
    const entries = (profiler.stop() as unknown as { statistics: GcEntry[] }).statistics;
    let freed = 0;
    let promotedBytes = 0;
    let gcMicros = 0;
    let scavenges = 0;
    let markCompacts = 0;
    for (const entry of entries) {
      freed += entry.beforeGC.heapStatistics.usedHeapSize - entry.afterGC.heapStatistics.usedHeapSize;
      gcMicros += entry.cost;
      if (entry.gcType === "Scavenge") {
        scavenges += 1;
        promotedBytes += Math.max(0, oldSpace(entry.afterGC.heapSpaceStatistics) - oldSpace(entry.beforeGC.heapSpaceStatistics));
      } else if (entry.gcType === "MarkSweepCompact") markCompacts += 1;
    }
    const allocatedBytes = usedAtEnd - usedAtStart + freed;
    collect();
    collect();
    const liveBytes = getHeapStatistics().used_heap_size;
    seq += 1;
    const window: AllocWindow = { seq, allocatedBytes, promotedBytes, scavenges, markCompacts, gcMs: gcMicros / 1000, liveBytes };
    writeFileSync(`${file}.tmp`, JSON.stringify(window));
    renameSync(`${file}.tmp`, file);
    profiler = new GCProfiler();
    profiler.start();
    usedAtStart = getHeapStatistics().used_heap_size;
  });
  if (heapProfile) await sampleHeap(heapProfile);
}

/** Samples allocations (every ~8 KiB, collected objects included) until exit; the profile goes to `path`. */
async function sampleHeap(path: string): Promise<void> {
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.enable");
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 8192,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as never);
  process.once("SIGTERM", () => {
    void session.post("HeapProfiler.stopSampling").then(({ profile }) => {
      writeFileSync(path, JSON.stringify(profile));
      process.exit(0);
    });
  });
}

/** Bench side: ends the server's current window (SIGUSR2) and returns its figures. */
export async function readAllocWindow(pid: number, file: string, previous: number): Promise<AllocWindow> {
  process.kill(pid, "SIGUSR2");
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (existsSync(file)) {
      const window = JSON.parse(readFileSync(file, "utf8")) as AllocWindow;
      if (window.seq > previous) return window;
    }
    if (Date.now() > deadline) throw new Error(`the server (pid ${pid}) did not write its allocation window to ${file}`);
    await new Promise((wake) => setTimeout(wake, 20));
  }
}
