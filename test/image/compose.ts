/**
 * The compose file as shipped, only an `.env` added: Redis, serve and two workers come up, serve's
 * `harness status` lists both workers live, no container logs a sandbox refusal, and one story
 * runs end to end through the deployment against the fake GitHub on the host.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { deliverWebhook, issuesLabeledPayload, signedDelivery, type FakeGitHub } from "../support/fake-github/index.js";
import { AGENT_SCRIPT, harnessYml, OWNER, storyEnd } from "../e2e/scenario.js";
import { envFileLines } from "./container.js";
import { ok, podman, podmanCompose, say, waitFor } from "./podman.js";

const PROJECT = "harness-image-test";
const SERVICES = ["redis", "serve", "worker-1", "worker-2"];
const REFUSAL = /sandbox cannot run/i;
/**
 * `podman-compose up -d` creates four containers from images already in the store (about 10 s
 * here); when Podman wedges (a lost network namespace once made it wait on nothing) the run
 * fails with what compose printed instead of hanging CI.
 */
const UP_GUARD_MS = 180_000;

interface WorkerView {
  live: boolean;
}

/** Brings the compose deployment up, checks it, runs one story and takes it all down (volumes included). */
export async function checkCompose(fake: FakeGitHub, containerHost: string): Promise<void> {
  const project = mkdtempSync(join(tmpdir(), "harness-compose-"));
  copyFileSync(resolve("docker-compose.yml"), join(project, "docker-compose.yml"));
  writeFileSync(join(project, ".env"), `${[...envFileLines(fake, containerHost), "LOG_FORMAT=json", "HARNESS_GITHUB_THROTTLE=off"].join("\n")}\n`);
  const compose = (args: string[], timeoutMs?: number): Promise<string> =>
    ok(podmanCompose(["-p", PROJECT, ...args], project, timeoutMs), `podman-compose ${args.join(" ")}`);
  const container = (service: string): string => `${PROJECT}_${service}_1`;
  try {
    await compose(["up", "-d"], UP_GUARD_MS);
    say("compose up: redis, serve, worker-1, worker-2");
    const status = await waitFor(
      "harness status in serve to list both workers live",
      async () => {
        const run = await podman(["exec", container("serve"), "node", "bin/harness.js", "status", "--json"], { timeoutMs: 60_000 });
        if (run.exitCode !== 0) return undefined;
        const parsed = JSON.parse(run.stdout?.toString("utf8") ?? "{}") as { workers?: WorkerView[] };
        return parsed.workers?.length === 2 && parsed.workers.every((each) => each.live) ? parsed : undefined;
      },
      240_000,
      2000,
    );
    say(`harness status in serve: ${status.workers?.length ?? 0} workers, all live`);

    await fake.addRepository({
      owner: OWNER,
      name: "image",
      files: { "README.md": "# image\n", ".harness-test/agent.sh": AGENT_SCRIPT, ".github/harness.yml": harnessYml() },
    });
    const issue = fake.createIssue(OWNER, "image", { title: "Through the compose deployment", body: "As an operator I want the image to work.", user: OWNER });
    const payload = issuesLabeledPayload(fake, { owner: OWNER, name: "image", number: issue.number, label: "story", sender: OWNER });
    const answer = await deliverWebhook("http://127.0.0.1:3000/api/github/webhooks", signedDelivery("issues", payload, fake.webhookSecret));
    if (answer.status !== 200) throw new Error(`serve answered the labelled issue ${answer.status}: ${answer.body}`);
    const started = Date.now();
    const { story } = await storyEnd(fake, "image", issue.number, 600_000);
    if (story.conclusion !== "success") throw new Error(`the story ended ${story.conclusion ?? "without a conclusion"}:\n${story.output?.summary ?? ""}`);
    say(`one story end to end through compose: ${story.conclusion} in ${Math.round((Date.now() - started) / 1000)} s`);
    fake.assertNoUnexpectedRequests();

    for (const service of SERVICES) {
      const logs = await podman(["logs", container(service)], { timeoutMs: 60_000 });
      const text = `${logs.stdout?.toString("utf8") ?? ""}${logs.tail}`;
      if (REFUSAL.test(text)) throw new Error(`${service} logged a sandbox refusal:\n${logs.tail}`);
    }
    say("no container logged a sandbox refusal");
  } catch (error) {
    for (const service of SERVICES) {
      const logs = await podman(["logs", "--tail", "40", container(service)], { timeoutMs: 60_000 });
      process.stderr.write(`--- ${service}\n${logs.tail}\n`);
    }
    throw error;
  } finally {
    await podmanCompose(["-p", PROJECT, "down", "-v", "-t", "30"], project);
    rmSync(project, { recursive: true, force: true });
  }
}
