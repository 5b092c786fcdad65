/**
 * Watches a running agent's log for a CLI waiting in a loop it will not leave by itself
 * (Codex without a network prints "Reconnecting... waiting for network" until its timeout,
 * an hour by default). Seen once, the agent is stopped: it is unavailable, not slow.
 */
import { statSync } from "node:fs";
import { open } from "node:fs/promises";
import { showsWaitingLoop } from "./unavailable.js";

/** How much of the log's end is read at each look. */
const WINDOW_BYTES = 8192;

/** A watch on one log; `stop()` ends it, `fired` tells whether it stopped the agent. */
export interface LogWatch {
  signal: AbortSignal;
  fired(): boolean;
  stop(): void;
}

/**
 * Looks at the end of `logPath` every `intervalMs` and aborts the returned signal once it
 * shows a waiting loop. The caller's own signal is passed through.
 */
export function watchForWaitingLoop(logPath: string, intervalMs: number, outer?: AbortSignal): LogWatch {
  const controller = new AbortController();
  let fired = false;
  let stopped = false;
  const onOuter = (): void => controller.abort(outer?.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener("abort", onOuter, { once: true });
  // Only what this run writes counts: an earlier binding's output may be in the same log.
  const from = sizeOf(logPath);
  let timer: NodeJS.Timeout | undefined;
  const look = async (): Promise<void> => {
    if (stopped) return;
    if (await logShowsLoop(logPath, from)) {
      fired = true;
      controller.abort(new Error("the agent is waiting for a network it does not have"));
      return;
    }
    if (!stopped) timer = setTimeout(() => void look(), intervalMs);
  };
  timer = setTimeout(() => void look(), intervalMs);
  return {
    signal: controller.signal,
    fired: () => fired,
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      outer?.removeEventListener("abort", onOuter);
    },
  };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

// Not the bounded reader: the agent log is the App's own file (written from the agent's output by src/exec, in the
// stage folder, which the sandbox does not let the agent write; only its `artifacts/` inside is), and only a window
// of it is read.
async function logShowsLoop(logPath: string, from: number): Promise<boolean> {
  let handle;
  try {
    handle = await open(logPath, "r");
  } catch {
    return false;
  }
  try {
    const { size } = await handle.stat();
    const start = Math.max(from, size - WINDOW_BYTES);
    if (size <= start) return false;
    const buffer = Buffer.alloc(size - start);
    await handle.read(buffer, 0, buffer.length, start);
    return showsWaitingLoop(buffer.toString("utf8"));
  } finally {
    await handle.close();
  }
}
