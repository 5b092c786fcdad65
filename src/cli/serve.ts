import { existsSync, readFileSync } from "node:fs";
import { Server as HttpServer } from "node:http";
import type { Server as NetServer } from "node:net";
import { join } from "node:path";
import { parseArgs, parseEnv } from "node:util";
import { ProbotOctokit, run } from "probot";
import { isNeverPassed } from "../exec/index.js";
import { appSecretValues } from "../github/door/index.js";
import { openStoryQueue, redactUrl, type HomeClaim, type QueueConfig, type StoryQueue } from "../queue/index.js";
import { sandboxFromEnv, SandboxSettingsError, scratchRemoved } from "../sandbox/index.js";
import { housekeepingFromEnv, HousekeepingSettingsError } from "../runner/index.js";
import { harnessHome } from "../workspace/index.js";
import { harnessApp, type HarnessAppSettings, type StoryWorkerHandle } from "../app.js";
import { positiveInteger, UsageError, type CliIO } from "./usage.js";
import { webhookNotice } from "./webhook-url.js";
import { backlogNotice, kernelSomaxconn, listeningWithBacklog, readListenBacklog } from "./listen-backlog.js";
import { asyncJsonLog } from "./json-log.js";
import { liftCredentials, webBaseFromEnv } from "../status/index.js";
import { capConnections, readServerDoor, serverDoorNotice, shortenTimeouts, type ServerDoorSettings } from "./server-door.js";
import { QUEUE_VARIABLES, readQueueSettings } from "./queue-settings.js";
import { checkPrivateKey, claimHomeOrSay } from "./deploy-checks.js";

const USAGE = `harness serve   (configured by the environment: APP_ID, PRIVATE_KEY or PRIVATE_KEY_PATH, WEBHOOK_SECRET, GHE_HOST, GHE_PROTOCOL, PORT, HARNESS_HOME, HARNESS_CONCURRENCY, HARNESS_AGENT_ENV, HARNESS_STORY_LABEL, HARNESS_GITHUB_THROTTLE, HARNESS_SANDBOX, HARNESS_SANDBOX_READ, HARNESS_SANDBOX_WRITE, HARNESS_SANDBOX_MAX_PROCESSES, HARNESS_SANDBOX_MEMORY_MB, HARNESS_LOG_CAP_MB, HARNESS_RETENTION_DAYS, HARNESS_MIN_FREE_MB, HARNESS_ALLOWED_BOTS, HARNESS_OUTBOX_MAX_DELAY_MS, HARNESS_STATUS_TOKEN, HARNESS_LISTEN_BACKLOG, HARNESS_MAX_CONNECTIONS, HARNESS_MAX_INFLIGHT, HARNESS_MAX_INFLIGHT_PER_CLIENT, ${QUEUE_VARIABLES})`;

interface PluginOptions {
  retry?: { enabled?: boolean };
  throttle?: { enabled?: boolean };
  [key: string]: unknown;
}

/**
 * The App's octokit class. The retry and throttling plugins each schedule every request
 * through Bottleneck, which costs about 10 ms a request; the webhook handlers make one or two
 * requests and must answer at once (a failure answers 500 and GitHub can redeliver), so both
 * are off unless an instance asks for them — the runner does, for its long-lived work.
 */
export const HarnessOctokit = ProbotOctokit.defaults((options: PluginOptions) => ({
  ...options,
  retry: { enabled: false, ...options.retry },
  throttle: { ...options.throttle, enabled: options.throttle?.enabled ?? false },
}));

/** Reads the App's own settings from the environment, naming the variable that is wrong. */
export function readAppSettings(env: NodeJS.ProcessEnv): HarnessAppSettings {
  const concurrency = positiveInteger("HARNESS_CONCURRENCY", env.HARNESS_CONCURRENCY?.trim() || undefined) ?? 1;
  const agentEnvAllow = (env.HARNESS_AGENT_ENV ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  for (const name of agentEnvAllow) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`HARNESS_AGENT_ENV: '${name}' is not an environment variable name`, USAGE);
    if (isNeverPassed(name)) throw new UsageError(`HARNESS_AGENT_ENV: '${name}' is one of the App's own credentials and is never passed to agents`, USAGE);
  }
  const labelName = env.HARNESS_STORY_LABEL?.trim() || "story";
  const throttle = (env.HARNESS_GITHUB_THROTTLE ?? "on").trim().toLowerCase();
  if (!["on", "off"].includes(throttle)) throw new UsageError(`HARNESS_GITHUB_THROTTLE must be 'on' or 'off', got '${throttle}'`, USAGE);
  let sandbox;
  let housekeeping;
  try {
    sandbox = sandboxFromEnv(env);
    housekeeping = housekeepingFromEnv(env);
  } catch (error) {
    if (error instanceof SandboxSettingsError || error instanceof HousekeepingSettingsError) throw new UsageError(error.message, USAGE);
    throw error;
  }
  const allowedBots = (env.HARNESS_ALLOWED_BOTS ?? "")
    .split(",")
    .map((login) => login.trim())
    .filter((login) => login !== "");
  for (const login of allowedBots) {
    if (!/^[A-Za-z0-9][A-Za-z0-9-]*\[bot\]$/.test(login)) throw new UsageError(`HARNESS_ALLOWED_BOTS: '${login}' is not a bot login (name[bot])`, USAGE);
  }
  const appSecrets = appSecretValues({ webhookSecret: env.WEBHOOK_SECRET, privateKey: env.PRIVATE_KEY ?? readPrivateKeyFile(env.PRIVATE_KEY_PATH) });
  const outboxMaxDelayMs = positiveInteger("HARNESS_OUTBOX_MAX_DELAY_MS", env.HARNESS_OUTBOX_MAX_DELAY_MS?.trim() || undefined);
  const maxInflight = positiveInteger("HARNESS_MAX_INFLIGHT", env.HARNESS_MAX_INFLIGHT?.trim() || undefined);
  const maxInflightPerClient = positiveInteger("HARNESS_MAX_INFLIGHT_PER_CLIENT", env.HARNESS_MAX_INFLIGHT_PER_CLIENT?.trim() || undefined);
  return {
    harnessHome: harnessHome(env),
    concurrency,
    agentEnvAllow,
    labelName,
    githubThrottle: throttle === "on",
    sandbox,
    housekeeping,
    appSecrets,
    allowedBots,
    webBase: webBaseFromEnv(env),
    ...(outboxMaxDelayMs !== undefined ? { outboxMaxDelayMs } : {}),
    ...(maxInflight !== undefined ? { maxInflight } : {}),
    ...(maxInflightPerClient !== undefined ? { maxInflightPerClient } : {}),
    ...(env.HARNESS_STATUS_TOKEN?.trim() ? { statusToken: env.HARNESS_STATUS_TOKEN.trim() } : {}),
    // Probot's own fallbacks, so the door checks what Probot would.
    webhookSecret: env.WEBHOOK_SECRET || "development",
    ...(env.WEBHOOK_PATH ? { webhookPath: env.WEBHOOK_PATH } : {}),
  };
}

/** The private key file Probot would read, for redaction; a missing file is Probot's error to report. */
function readPrivateKeyFile(path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * `harness serve` (and `npm start`): runs the App with Probot's server — its setup page when
 * APP_ID or the private key is missing. Probot reads GHE_HOST/GHE_PROTOCOL, PORT and
 * WEBHOOK_SECRET itself. Runs until SIGTERM or SIGINT; running stories are then interrupted
 * and resumed on the next start. With `HARNESS_QUEUE=redis://…` it only takes webhooks and
 * enqueues (the `harness worker` processes run the stories) unless `HARNESS_WORKER=on`.
 */
export async function serveCommand(args: string[], io: CliIO): Promise<number> {
  parseArgs({ args, options: {}, strict: true, allowPositionals: false });
  loadDotEnv(io);
  const settings = readAppSettings(io.env);
  const queueSettings = readQueueSettings(io.env, { harnessHome: settings.harnessHome, concurrency: settings.concurrency, usage: USAGE });
  const listen = readListenBacklog(io.env, kernelSomaxconn());
  const door = readServerDoor(io.env);
  const needsSetup = !io.env.APP_ID || !(io.env.PRIVATE_KEY || io.env.PRIVATE_KEY_PATH);
  // The queue is opened only for a configured App; the setup page needs none.
  let claim: HomeClaim | undefined;
  if (!needsSetup) {
    checkPrivateKey(io.env, USAGE);
    // Probot would fall back to the secret "development": anyone could sign webhooks for a configured App.
    if (!io.env.WEBHOOK_SECRET?.trim())
      throw new UsageError("WEBHOOK_SECRET is required when APP_ID and a private key are set (the App's webhook secret, as set on GitHub)", USAGE);
    claim = await claimHomeOrSay(settings.harnessHome, "serve", io);
    if (!claim) return 2;
  }
  const queue = needsSetup ? undefined : await openQueueOrSay(queueSettings.queue, io);
  if (!needsSetup && !queue) {
    await claim?.release();
    return 2;
  }
  const log = asyncJsonLog(io.env);
  // The story worker the App starts (when it runs jobs): its outbox gets a last pass at the stop.
  let worker: StoryWorkerHandle | undefined;
  // Probot's server takes no backlog: it is given at its listen (see listen-backlog.ts).
  // Probot's run adds a SIGINT listener that stops the server and exits at once, which would cut
  // the stop below short (stories not interrupted, the queue not closed): it is taken off again.
  const sigintBefore = new Set(process.listeners("SIGINT"));
  const { value: server, applied } = await listeningWithBacklog(
    listen.backlog,
    () =>
      run(queue ? harnessApp({ queue, settings, runJobs: queueSettings.serveRunsJobs, onWorker: (started) => (worker = started) }) : () => undefined, {
        env: io.env,
        Octokit: HarnessOctokit,
        ...(log ? { log } : {}),
      }),
    (listening) => guardServer(listening, door),
  );
  for (const listener of process.listeners("SIGINT")) if (!sigintBefore.has(listener)) process.off("SIGINT", listener);
  const capped = backlogNotice(listen);
  if (capped) io.stderr(capped);
  if (applied === 0)
    io.stderr(
      `harness serve: the listen backlog ${listen.backlog} could not be set (this node publishes no net.server.listen channel); node's default applies\n`,
    );
  io.stderr(serverDoorNotice(door));
  if (!needsSetup) io.stderr(webhookNotice(io.env));
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  io.stderr(`harness serve: ${signal}, stopping\n`);
  await server.stop();
  await queue?.close({ abortRunning: true });
  // The end reports the last jobs handed to the outbox go out now if GitHub takes them; else on the next start.
  await worker?.drainOutbox();
  await scratchRemoved();
  await claim?.release();
  // The last lines, written before the process ends.
  log?.flush();
  return 0;
}

/**
 * The App's server, as its listen starts: connections capped (503 past the cap), node's
 * timeouts for slow headers and requests shortened, and the status token lifted off every
 * request before Probot's request logger (the first listener) sees its URL and headers.
 */
function guardServer(server: NetServer, door: ServerDoorSettings): void {
  if (!(server instanceof HttpServer)) return;
  capConnections(server, { maxConnections: door.maxConnections });
  shortenTimeouts(server);
  server.prependListener("request", liftCredentials);
}

/** Opens the configured queue; a Redis that cannot be reached is said on stderr (undefined). */
export async function openQueueOrSay(config: QueueConfig, io: CliIO): Promise<StoryQueue | undefined> {
  try {
    return await openStoryQueue(config, { error: (message) => io.stderr(`${message}\n`) });
  } catch (error) {
    if (config.kind !== "redis") throw error;
    io.stderr(`harness: ${redactUrl(error instanceof Error ? error.message : String(error))}\n`);
    return undefined;
  }
}

/**
 * Reads `.env` of the working directory as Probot does (values already in the environment
 * win), before the App's settings are read: Probot itself loads it only once `run` starts.
 */
export function loadDotEnv(io: CliIO): void {
  const path = join(io.cwd, ".env");
  if (!existsSync(path)) return;
  for (const [name, value] of Object.entries(parseEnv(readFileSync(path, "utf8")))) {
    if (io.env[name] === undefined && value !== undefined) io.env[name] = value;
  }
}
