/** `harness serve` tells the operator where GitHub must send webhooks. */
import { join } from "node:path";
import { webhookNotice } from "../../src/cli/webhook-url.js";
import { useFakeGitHub } from "../support/fake-github-fixture.js";
import { startApp } from "../e2e/app-process.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { eventually } from "../support/poll.js";

afterAll(removeTempDirs);

describe("the webhook URL notice", () => {
  const fake = useFakeGitHub();

  it("names the local address, with the path Probot serves", () => {
    expect(webhookNotice({})).toContain("webhooks are received at http://localhost:3000/api/github/webhooks");
    expect(webhookNotice({ HOST: "0.0.0.0", PORT: "8080", WEBHOOK_PATH: "/hooks" })).toContain("http://0.0.0.0:8080/hooks");
    expect(webhookNotice({})).toContain("WEBHOOK_PROXY_URL");
  });

  it("names the proxy channel when webhooks arrive through one", () => {
    const notice = webhookNotice({ PORT: "4000", WEBHOOK_PROXY_URL: "https://smee.io/abc123" });
    expect(notice).toContain("set the App's Webhook URL to https://smee.io/abc123");
    expect(notice).toContain("forwarded to http://localhost:4000/api/github/webhooks");
  });

  it("is printed by a configured App at start", async () => {
    const root = makeTempDir("harness-notice-");
    const app = await startApp({ fake, home: join(root, "home"), workDir: root });
    try {
      const line = await eventually(
        "the notice in the App's log",
        async () => (await app.log()).split("\n").find((text) => text.startsWith("harness serve: webhooks are received at")),
        20_000,
      );
      expect(line).toBe(`harness serve: webhooks are received at ${app.webhookUrl}`);
    } finally {
      await app.stop();
    }
  });
});
