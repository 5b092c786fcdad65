import { parseArgs } from "node:util";
import { COMMAND_OPTIONS } from "./options.js";
import { collectHarnessStatus, renderStatusText } from "../status/index.js";
import { harnessHome } from "../workspace/index.js";
import { QUEUE_VARIABLES, readQueueSettings } from "./queue-settings.js";
import { openQueueOrSay } from "./serve.js";
import type { CliIO } from "./usage.js";

const HELP = `harness status [--json]

Lists the App's queued and running jobs, quarantined job files and GitHub writes not delivered
yet (or given up), read from HARNESS_HOME. With HARNESS_QUEUE=redis://… it lists the queue's
jobs from Redis and every worker's quarantined files and undelivered writes, which each
worker publishes there while it runs (a worker that stopped with work left shows as not live).
The running App serves the same JSON at GET /harness/status.json with
"Authorization: Bearer $HARNESS_STATUS_TOKEN".
`;

/** `harness status`: what the App is doing, without reading its logs. */
export async function statusCommand(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({ args, options: COMMAND_OPTIONS.status, strict: true, allowPositionals: false });
  if (values.help) {
    io.stdout(HELP);
    return 0;
  }
  const home = harnessHome(io.env);
  const { queue: config } = readQueueSettings(io.env, {
    harnessHome: home,
    concurrency: 1,
    usage: `harness status [--json]   (reads HARNESS_HOME, ${QUEUE_VARIABLES})`,
  });
  // Only Redis is opened: the embedded queue is read from its folder without disturbing the App that holds it.
  const queue = config.kind === "redis" ? await openQueueOrSay(config, io) : undefined;
  if (config.kind === "redis" && !queue) return 2;
  let status;
  try {
    status = await collectHarnessStatus(home, queue);
  } finally {
    await queue?.close();
  }
  io.stdout(values.json ? `${JSON.stringify(status, null, 2)}\n` : renderStatusText(status));
  return 0;
}
