import { EmbeddedQueue } from "../../../src/queue/index.js";
import { describeQueueContract } from "../contract.js";
import { tempDir } from "../helpers.js";

describeQueueContract("embedded", async () => {
  const { dir, remove } = await tempDir("harness-queue-contract-");
  return {
    open: (options) =>
      EmbeddedQueue.open({
        dir,
        rescanMs: 50,
        concurrency: options?.concurrency ?? 1,
        ...(options?.installationSlots ? { installationSlots: options.installationSlots } : {}),
        ...(options?.crashPoint ? { crashPoint: options.crashPoint } : {}),
      }),
    childConfig: () => ({ kind: "embedded", dir, concurrency: 1 }),
    dispose: remove,
  };
});
