/** PRIVATE_KEY as env files give it: the forms Probot reads pass, a quoted one is refused in one line. */
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkPrivateKey } from "../../src/cli/deploy-checks.js";
import { UsageError } from "../../src/cli/usage.js";

const pem = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" }).toString();
const escaped = pem.trim().replace(/\n/g, "\\n");

describe("checkPrivateKey", () => {
  it.each([
    ["the PEM itself", pem],
    ["one line of base64", Buffer.from(pem).toString("base64")],
    ["\\n escapes, unquoted", escaped],
  ])("takes %s", (_form, value) => {
    expect(() => checkPrivateKey({ PRIVATE_KEY: value }, "usage")).not.toThrow();
  });

  it("refuses a key an env file kept in quotes, saying so in one line", () => {
    let thrown: unknown;
    try {
      checkPrivateKey({ PRIVATE_KEY: `"${escaped}"` }, "usage");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    const message = (thrown as UsageError).message;
    expect(message).toMatch(/^PRIVATE_KEY is not a readable private key \(it starts with a quote/);
    expect(message).not.toContain("\n");
    expect(message).not.toContain("MII");
  });

  it("refuses a damaged key without echoing it", () => {
    const damaged = escaped.replace(/(\\n[A-Za-z0-9+/]{10})[A-Za-z0-9+/]{20}/, "$1");
    expect(() => checkPrivateKey({ PRIVATE_KEY: damaged }, "usage")).toThrow(/^PRIVATE_KEY is not a readable private key: /);
  });

  it("leaves an unset key to the callers' own checks", () => {
    expect(() => checkPrivateKey({}, "usage")).not.toThrow();
  });
});

describe("harness serve with a configured App", () => {
  it("refuses to start without WEBHOOK_SECRET (Probot would accept webhooks signed with its default), in one line, exit 2", async () => {
    const { main } = await import("../../src/cli.js");
    const cwd = mkdtempSync(join(tmpdir(), "serve-secret-"));
    try {
      let stderr = "";
      const io = {
        stdout: () => undefined,
        stderr: (text: string) => void (stderr += text),
        cwd,
        env: { PATH: process.env.PATH, APP_ID: "1", PRIVATE_KEY: escaped, HARNESS_HOME: join(cwd, "home") },
      };
      expect(await main(["serve"], io)).toBe(2);
      expect(stderr).toMatch(/^harness serve: WEBHOOK_SECRET is required when APP_ID and a private key are set/);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
