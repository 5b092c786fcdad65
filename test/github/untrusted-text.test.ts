import { describe, expect, it } from "@jest/globals";
import { appSecretValues } from "../../src/github/door/index.js";
import { neutralise, singleLine, untrustedLine } from "../../src/github/report/index.js";

describe("singleLine", () => {
  it("turns every line break and control character into one space, so no trailer can follow", () => {
    for (const breakChar of ["\n", "\r\n", "\r", "\u2028", "\u2029", "\u0085", "\v", "\f", "\u0000"]) {
      expect(singleLine(`Fix it${breakChar}${breakChar}Co-authored-by: Eve <eve@example.invalid>`)).toBe("Fix it Co-authored-by: Eve <eve@example.invalid>");
    }
  });

  it("bounds the length without splitting a surrogate pair", () => {
    expect(singleLine("x".repeat(300))).toHaveLength(256);
    expect(singleLine(`${"x".repeat(255)}🔑`)).toBe("x".repeat(255));
  });
});

describe("neutralise", () => {
  it.each([
    ["a user mention", "ping @alice", /@alice/],
    ["a team mention", "ping @org/team", /@org/],
    ["an issue reference", "see #12", /#12/],
    ["an image", "![pixel](https://t.invalid/p.png)", /!\[/],
    ["a link", "[click](https://t.invalid)", /\]\(/],
    ["a bare URL", "https://t.invalid/x", /https:\/\//],
    ["a www autolink", "www.t.invalid", /www\./],
    ["HTML", '<img src="x">', /(?<!\\)<img/],
    ["an entity that decodes to @", "&#64;team", /(?<!\\)&#/],
  ])("breaks %s", (_what, text, forbidden) => {
    expect(neutralise(text)).not.toMatch(forbidden);
  });

  it("keeps the words readable", () => {
    expect(untrustedLine("Add a greeting\nfor users")).toBe("Add a greeting for users");
  });
});

describe("appSecretValues", () => {
  it("names the webhook secret, the key whole and its lines, for a PEM given in base64 too", () => {
    const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7b0Y3Jt5c2VjcmV0a2V5bWF0ZXJpYWxoZXJl\nc2VjcmV0\n-----END RSA PRIVATE KEY-----\n";
    const values = appSecretValues({ webhookSecret: "hook-secret", privateKey: Buffer.from(pem).toString("base64") });
    expect(values).toContain("hook-secret");
    expect(values).toContain("MIIEowIBAAKCAQEAx7b0Y3Jt5c2VjcmV0a2V5bWF0ZXJpYWxoZXJl");
    expect(values).not.toContain("c2VjcmV0");
    expect(appSecretValues({})).toEqual([]);
  });
});
