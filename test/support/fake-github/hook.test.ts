/** The fake's App webhook: deliveries recorded with the App's status, listed newest first by cursor pages, redelivered on request. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fakeOctokit } from "./client.js";
import { startFakeGitHub, type FakeGitHub } from "./index.js";

let gh: FakeGitHub;
let receiver: Server;
/** Status the receiver answers for each delivery id it gets (200 unless listed). */
const answers = new Map<string, number>();
const got: Array<{ id: string; event: string; signature: string }> = [];

beforeAll(async () => {
  gh = await startFakeGitHub({ validateResponses: true });
  receiver = createServer((request, response) => {
    const id = String(request.headers["x-github-delivery"]);
    got.push({ id, event: String(request.headers["x-github-event"]), signature: String(request.headers["x-hub-signature-256"]) });
    request.resume();
    request.on("end", () => response.writeHead(answers.get(id) ?? 200).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  await gh.close();
});

describe("the fake's App webhook", () => {
  it("records a delivery that could not connect (no URL) with status code 0", async () => {
    const record = await gh.sendWebhook("issues", { action: "labeled" });
    expect(record).toMatchObject({ statusCode: 0, status: "failed to connect", redelivery: false, event: "issues", action: "labeled" });
  });

  it("sends signed deliveries, records each status, lists them newest first with cursor pages, and redelivers by id", async () => {
    gh.setWebhookUrl(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`);
    const first = await gh.sendWebhook("issues", { action: "labeled", installation: { id: gh.installationId } });
    answers.set(first.guid, 503);
    const failed = await gh.sendWebhook("issues", { action: "labeled" });
    expect(first).toMatchObject({ statusCode: 200, status: "OK", installationId: gh.installationId });
    expect(got.at(-1)?.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    const third = await gh.sendWebhook("issue_comment", { action: "created" });
    answers.set(failed.guid, 503);
    const octokit = fakeOctokit(gh);
    const pageOne = await octokit.rest.apps.listWebhookDeliveries({ per_page: 2 });
    expect(pageOne.data.map((delivery) => delivery.id)).toEqual([third.id, failed.id]);
    const next = /<([^>]+)>;\s*rel="next"/.exec(pageOne.headers.link ?? "")?.[1];
    expect(next).toBeDefined();
    const cursor = new URL(next ?? "").searchParams.get("cursor") ?? "";
    const pageTwo = await octokit.rest.apps.listWebhookDeliveries({ per_page: 2, cursor });
    expect(pageTwo.data.map((delivery) => delivery.id)).toEqual([first.id, first.id - 1]);
    expect(pageTwo.headers.link).toBeUndefined();
    expect(pageTwo.data[0]).toMatchObject({
      guid: first.guid,
      status_code: 200,
      redelivery: false,
      event: "issues",
      action: "labeled",
      installation_id: gh.installationId,
      repository_id: null,
    });

    const accepted = await octokit.rest.apps.redeliverWebhookDelivery({ delivery_id: failed.id });
    expect(accepted.status).toBe(202);
    await gh.webhooksIdle();
    const again = gh.hookDeliveries().at(-1);
    expect(again).toMatchObject({ guid: failed.guid, redelivery: true, statusCode: 503, status: "Invalid HTTP Response: 503" });
    expect(got.at(-1)?.id).toBe(failed.guid);
    gh.assertNoUnexpectedRequests();
  });

  it("answers 404 for an unknown delivery id, and refuses an installation token", async () => {
    const octokit = fakeOctokit(gh);
    await expect(octokit.rest.apps.redeliverWebhookDelivery({ delivery_id: 999_999 })).rejects.toMatchObject({ status: 404 });
    gh.assertNoUnexpectedRequests();
    // Octokit's App auth signs `/app/…` with the JWT whatever it holds: a bare installation token shows the refusal.
    const installation = fakeOctokit(gh, { token: gh.mintToken() });
    await expect(installation.request("GET /app/hook/deliveries")).rejects.toMatchObject({ status: 401 });
    await expect(installation.request("POST /app/hook/deliveries/{delivery_id}/attempts", { delivery_id: 1 })).rejects.toMatchObject({ status: 401 });
    expect(gh.takeUnexpectedRequests().map((request) => `${request.method} ${request.path} ${request.status}`)).toEqual([
      "GET /api/v3/app/hook/deliveries 401",
      "POST /api/v3/app/hook/deliveries/1/attempts 401",
    ]);
  });
});
