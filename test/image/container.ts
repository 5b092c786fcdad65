/**
 * The image alone, as `docker run` starts it: `--help`; `serve` answering a signed ping through
 * a published port; the sandbox probe passing inside the container as the non-root user with
 * the App's own bubblewrap arguments (and refusing, naming the flags, without them); SIGTERM
 * stopping it within its grace; and the bad inputs an operator gives it, each said in one line.
 */
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deliverWebhook, signedDelivery, type FakeGitHub } from "../support/fake-github/index.js";
import { freePort } from "../support/net.js";
import { ok, podman, say, waitFor } from "./podman.js";

/** The flags the README and the compose file give: see the README's "Deploying with the Dockerfile". */
export const SANDBOX_FLAGS = ["--security-opt", "seccomp=unconfined", "--security-opt", "systempaths=unconfined", "--device", "/dev/net/tun"];
const GRACE_S = 10;

/** The probe the runner makes before a story, run by node inside the container with the App's own code. */
const PROBE = `import("/app/dist/sandbox/index.js").then(async (m) => {
  const status = await m.probeSandbox(m.sandboxFromEnv(process.env));
  process.stdout.write(JSON.stringify({ uid: process.getuid(), status }) + "\\n");
  process.exit(status.state === "on" ? 0 : 1);
})`;

/** The env file an operator writes: the fake's App credentials. */
export function envFileLines(fake: FakeGitHub, host: string, privateKey = Buffer.from(fake.privateKey).toString("base64")): string[] {
  return [`APP_ID=${fake.appId}`, `PRIVATE_KEY=${privateKey}`, `WEBHOOK_SECRET=${fake.webhookSecret}`, `GHE_HOST=${host}`, "GHE_PROTOCOL=http"];
}

/** The last line a container wrote (stdout and stderr), and its exit code, for a run that must fail. */
async function failsSaying(args: string[], what: string, expected: RegExp): Promise<void> {
  const result = await podman(["run", "--rm", ...args], { timeoutMs: 120_000 });
  const lines = result.tail.trim().split("\n");
  const said = lines.find((line) => expected.test(line));
  if (result.exitCode === 0 || !said)
    throw new Error(`${what}: expected a non-zero exit and a line matching ${expected}, got exit ${result.exitCode}:\n${result.tail}`);
  if (lines.some((line) => /^\s+at /.test(line))) throw new Error(`${what}: a stack trace instead of one line:\n${result.tail}`);
  say(`${what}: exit ${result.exitCode}, "${said.trim()}"`);
}

/** Runs every check of the image alone; throws on the first that fails. */
export async function checkContainer(image: string, fake: FakeGitHub): Promise<void> {
  const help = await ok(podman(["run", "--rm", image, "node", "bin/harness.js", "--help"]), "--help");
  if (!help.includes("harness serve")) throw new Error(`--help printed no usage:\n${help}`);
  const uid = (await ok(podman(["run", "--rm", image, "id", "-u"]), "id -u")).trim();
  if (uid === "0") throw new Error("the image runs as root");
  say(`--help answered; the image runs as uid ${uid}`);

  const work = mkdtempSync(join(tmpdir(), "harness-image-"));
  const name = `harness-image-serve-${process.pid}`;
  try {
    const envFile = join(work, "serve.env");
    writeFileSync(envFile, `${envFileLines(fake, fake.host).join("\n")}\n`);
    const port = await freePort();
    await ok(podman(["run", "-d", "--name", name, ...SANDBOX_FLAGS, "-p", `127.0.0.1:${port}:3000`, "--env-file", envFile, image]), "serve");
    const ping = { zen: "Keep it logically awesome.", hook_id: 1, hook: { type: "App", id: 1, active: true, events: ["issues"], config: {} } };
    const answer = await waitFor(
      "serve to answer a signed ping through the published port",
      async () => {
        try {
          const delivered = await deliverWebhook(`http://127.0.0.1:${port}/api/github/webhooks`, signedDelivery("ping", ping, fake.webhookSecret));
          return delivered;
        } catch {
          return undefined;
        }
      },
      120_000,
    );
    if (answer.status !== 200) throw new Error(`the signed ping was answered ${answer.status}: ${answer.body}`);
    say(`serve answered a signed ping through -p ${port}:3000 (200)`);

    const started = Date.now();
    await ok(podman(["stop", "-t", String(GRACE_S), name]), "podman stop");
    const stoppedMs = Date.now() - started;
    const exit = (await ok(podman(["inspect", "--format", "{{.State.ExitCode}}", name]), "inspect")).trim();
    if (exit !== "0" || stoppedMs >= GRACE_S * 1000) throw new Error(`SIGTERM: exit ${exit} after ${stoppedMs} ms (grace ${GRACE_S} s)`);
    say(`SIGTERM stopped serve in ${stoppedMs} ms (grace ${GRACE_S} s), exit 0`);

    const probe = await podman(["run", "--rm", ...SANDBOX_FLAGS, image, "node", "-e", PROBE]);
    if (probe.exitCode !== 0) throw new Error(`the sandbox probe failed inside the container:\n${probe.tail}`);
    say(`sandbox probe inside the container: ${probe.stdout?.toString("utf8").trim() ?? ""}`);
    // Without the flags, the container's masked /proc (or a host that refuses user namespaces) leaves it unusable: said, with the fix.
    const refused = await podman(["run", "--rm", image, "node", "-e", PROBE]);
    const refusal = refused.stdout?.toString("utf8") ?? "";
    if (refused.exitCode === 0 || !refusal.includes("systempaths=unconfined"))
      throw new Error(`without the flags the probe should refuse naming them:\n${refused.tail}`);
    say(`without the flags the sandbox is refused: ${refusal.trim().slice(0, 300)}`);

    await checkBadInput(image, fake, work);
  } finally {
    await podman(["rm", "-f", "-v", "-t", "0", name]);
    rmSync(work, { recursive: true, force: true });
  }
}

/** A missing key, a key pasted in quotes with escaped newlines, a root-owned data folder: one line and a non-zero exit. */
async function checkBadInput(image: string, fake: FakeGitHub, work: string): Promise<void> {
  const worker = ["node", "bin/harness.js", "worker"];
  const missing = join(work, "missing.env");
  writeFileSync(
    missing,
    `${envFileLines(fake, fake.host)
      .filter((line) => !line.startsWith("PRIVATE_KEY="))
      .join("\n")}\nHARNESS_QUEUE=redis://127.0.0.1:1/0\n`,
  );
  await failsSaying(["--env-file", missing, image, ...worker], "worker without PRIVATE_KEY", /PRIVATE_KEY.*required/);
  // An env file keeps quotes and backslashes as written: the PEM pasted in quotes with \n escapes.
  const escaped = join(work, "escaped.env");
  const quotedPem = `"${fake.privateKey.trim().replace(/\n/g, "\\n")}"`;
  writeFileSync(escaped, `${envFileLines(fake, fake.host, quotedPem).join("\n")}\n`);
  await failsSaying(["--env-file", escaped, image], "serve with a quoted PRIVATE_KEY", /PRIVATE_KEY is not a readable private key/);
  // A bind-mounted data folder the container's user cannot write.
  const data = join(work, "root-owned");
  mkdirSync(data, { mode: 0o755 });
  chownSync(data, 0, 0);
  const good = join(work, "good.env");
  writeFileSync(good, `${envFileLines(fake, fake.host).join("\n")}\n`);
  await failsSaying(
    ["--env-file", good, "-v", `${data}:/var/lib/story-harness`, image],
    "serve with a root-owned data volume",
    /HARNESS_HOME \S+ is not writable/,
  );
}
