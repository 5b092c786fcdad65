import { EmbeddedQueue } from "../../../src/queue/index.js";
import { describeQueueContract } from "../contract.js";
import { tempDir } from "../helpers.js";

// The queue's contract, with the enqueue appended to the write-ahead log (as the App opens it).
describeQueueContract("embedded with a write-ahead log", async () => {
  const { dir, remove } = await tempDir("harness-queue-wal-contract-");
  return {
    open: (options) =>
      EmbeddedQueue.open({
        dir,
        rescanMs: 50,
        writeAheadLog: true,
        concurrency: options?.concurrency ?? 1,
        ...(options?.installationSlots ? { installationSlots: options.installationSlots } : {}),
        ...(options?.crashPoint ? { crashPoint: options.crashPoint } : {}),
      }),
    childConfig: () => ({ kind: "embedded", dir, concurrency: 1 }),
    dispose: remove,
  };
});
