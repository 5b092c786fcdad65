import { parseArgs } from "node:util";
import { COMMAND_OPTIONS } from "./options.js";
import { createProbot } from "probot";
import { checkPrivateKey, claimHomeOrSay } from "./deploy-checks.js";
import { startStoryWorker } from "../app.js";
import { HarnessOctokit, loadDotEnv, openQueueOrSay, readAppSettings } from "./serve.js";
import { QUEUE_VARIABLES, readQueueSettings } from "./queue-settings.js";
import { UsageError, type CliIO } from "./usage.js";
import { scratchRemoved } from "../sandbox/index.js";
import { schemas } from "../schema/index.js";

const USAGE = `harness worker   (configured by the environment: HARNESS_QUEUE=redis://host:6379/0 (required), APP_ID, PRIVATE_KEY or PRIVATE_KEY_PATH, GHE_HOST, GHE_PROTOCOL, HARNESS_HOME, HARNESS_CONCURRENCY, HARNESS_AGENT_ENV, HARNESS_GITHUB_THROTTLE, ${QUEUE_VARIABLES})`;

/**
 * `harness worker`: takes stories from the Redis queue and runs them, `HARNESS_CONCURRENCY`
 * at a time, with its own `HARNESS_HOME` (repository caches, worktrees, run records). It
 * serves no webhooks; any number of workers on any number of machines share one queue. Runs
 * until SIGTERM or SIGINT: running stories are then stopped and go back to the queue at once.
 */
export async function workerCommand(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({ args, options: COMMAND_OPTIONS.worker, strict: true, allowPositionals: false });
  if (values.help) {
    io.stdout(`usage: ${USAGE}\n`);
    return 0;
  }
  loadDotEnv(io);
  const settings = readAppSettings(io.env);
  const { queue: config } = readQueueSettings(io.env, { harnessHome: settings.harnessHome, concurrency: settings.concurrency, usage: USAGE });
  if (config.kind !== "redis")
    throw new UsageError(
      "HARNESS_QUEUE is not set: a worker takes its stories from Redis (HARNESS_QUEUE=redis://host:6379/0); with the embedded queue, harness serve runs them",
      USAGE,
    );
  if (!io.env.APP_ID || !(io.env.PRIVATE_KEY || io.env.PRIVATE_KEY_PATH))
    throw new UsageError("APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) are required: a worker reports as the App", USAGE);
  checkPrivateKey(io.env, USAGE);
  const claim = await claimHomeOrSay(settings.harnessHome, "worker", io);
  if (!claim) return 2;
  const queue = await openQueueOrSay(config, io);
  if (!queue) {
    await claim.release();
    return 2;
  }
  const probot = createProbot({ env: io.env, overrides: { Octokit: HarnessOctokit } });
  // Probot builds its logger and octokit while it initialises.
  await probot.ready();
  // Every schema compiled before the first job (about half a second of CPU, once per worker), not inside a story.
  schemas().precompile();
  const worker = startStoryWorker({ queue, settings, app: { auth: (installationId?: number) => probot.auth(installationId), log: probot.log } });
  probot.log.info({ concurrency: queue.concurrency, home: settings.harnessHome }, "harness worker: taking stories");
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  io.stderr(`harness worker: ${signal}, stopping\n`);
  await queue.close({ abortRunning: true });
  // The end reports the last jobs handed to the outbox go out now if GitHub takes them; else on the next start.
  await worker.drainOutbox();
  await scratchRemoved();
  await claim.release();
  return 0;
}
