import { EmbeddedQueue } from "./embedded.js";
import type { LeaseTiming, StoryQueue } from "./port.js";

/** Which adapter a process uses, and its settings (read from the environment by the CLI). */
export type QueueConfig =
  | {
      kind: "embedded";
      /** `<harnessHome>/queue`. */
      dir: string;
      concurrency: number;
      installationSlots?: number;
    }
  | {
      kind: "redis";
      /** `HARNESS_QUEUE`. */
      url: string;
      concurrency: number;
      /** `HARNESS_INSTALLATION_SLOTS`. */
      installationSlots?: number;
      lease?: Partial<LeaseTiming>;
      prefix?: string;
    };

/**
 * Opens the queue a process was configured with. The BullMQ adapter is loaded only when it is
 * used, so a process on the embedded queue never pays for its imports.
 */
export async function openStoryQueue(config: QueueConfig, log?: { error: (message: string) => void }): Promise<StoryQueue> {
  // Settings left unset pass as undefined: each adapter reads undefined as "its default".
  if (config.kind === "embedded") {
    return EmbeddedQueue.open({
      dir: config.dir,
      concurrency: config.concurrency,
      installationSlots: config.installationSlots,
      log,
      // The App's enqueue: one appended record (see src/queue/wal).
      writeAheadLog: true,
    });
  }
  const { BullmqQueue } = await import("./bullmq/index.js");
  return BullmqQueue.open({
    url: config.url,
    concurrency: config.concurrency,
    installationSlots: config.installationSlots,
    lease: config.lease,
    prefix: config.prefix,
    log,
  });
}
