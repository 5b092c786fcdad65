import { describe, expect, it } from "@jest/globals";
import { redactSecrets, REDACTED } from "../../src/github/index.js";

describe("redactSecrets", () => {
  it("removes GitHub tokens of every kind", () => {
    const tokens = ["ghs_" + "A1".repeat(18), "ghp_" + "b".repeat(36), "gho_" + "C".repeat(36), "github_pat_" + "11AB_cd".repeat(8)];
    for (const token of tokens) {
      const out = redactSecrets(`before ${token} after`);
      expect(out).toBe(`before ${REDACTED} after`);
    }
  });

  it("removes credentials from remotes and headers", () => {
    expect(redactSecrets("fatal: https://x-access-token:s3cr3t-value@example.test/o/r.git")).toBe(
      `fatal: https://x-access-token:${REDACTED}@example.test/o/r.git`,
    );
    expect(redactSecrets("remote https://user:hunter2hunter2@host.test/x")).toBe(`remote https://user:${REDACTED}@host.test/x`);
    expect(redactSecrets("> Authorization: token abc.def\nnext line")).toBe(`> Authorization: ${REDACTED}\nnext line`);
    expect(redactSecrets("curl -H 'X: Bearer eyJhbGciOi.J9.abc' url")).toBe(`curl -H 'X: Bearer ${REDACTED}' url`);
  });

  // Each input below is one that only the named pattern catches, so dropping that pattern fails here.
  it("removes an x-access-token credential outside a URL, and one whose value holds a slash", () => {
    expect(redactSecrets("credential x-access-token:v1.opaque-value@host.test stored")).toBe(`credential x-access-token:${REDACTED}@host.test stored`);
    expect(redactSecrets("https://x-access-token:ab/cd+ef@host.test/o/r.git")).toBe(`https://x-access-token:${REDACTED}@host.test/o/r.git`);
  });

  it("removes a value after the word token, without an Authorization header or a known prefix", () => {
    expect(redactSecrets("git said: token v1.0123456789abcdef0123456789 is invalid")).toBe(`git said: token ${REDACTED} is invalid`);
    expect(redactSecrets("TOKEN 0123456789abcdefghijXYZ. Next")).toBe(`TOKEN ${REDACTED} Next`);
    // Short words after "token" are prose, not credentials.
    expect(redactSecrets("the token was refused")).toBe("the token was refused");
  });

  it("removes given secret values, longest first, and leaves other text alone", () => {
    expect(redactSecrets("key=sk-live-123456 and sk-live", ["sk-live", "sk-live-123456"])).toBe(`key=${REDACTED} and ${REDACTED}`);
    expect(redactSecrets("abc", ["ab"])).toBe("abc");
    expect(redactSecrets("npm ERR! code E404 at https://example.test/pkg")).toBe("npm ERR! code E404 at https://example.test/pkg");
  });

  it("removes a secret in the base64 form git's Basic header carries", () => {
    const secret = "opaque-installation-token-1";
    const basic = Buffer.from(`x-access-token:${secret}`).toString("base64");
    expect(redactSecrets(`header was ${basic} then`, [secret])).toBe(`header was ${REDACTED} then`);
    expect(redactSecrets(`> basic ${basic}`)).toBe(`> basic ${REDACTED}`);
  });

  // How fast is a benchmark claim (bench/github-text.ts); here only that nothing is touched.
  it("leaves long lines of near-misses unchanged", () => {
    const line = "a.b-".repeat(250_000) + "x-access-token:".repeat(10_000) + "://a:".repeat(10_000);
    expect(redactSecrets(line)).toBe(line);
  });
});
