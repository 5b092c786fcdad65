/**
 * Property test of the redactor: for random secrets (seeded, so a failure reproduces), each
 * encoding a suite or a tool might print — plain, URL-encoded, hex, base64 and base64url, alone
 * or inside a longer encoded stream at any byte alignment — leaves nothing of the secret in
 * what is posted. What "nothing" means is derived independently of the redactor: the encoder
 * of Node produces the stream, and the characters whose bits come from the secret alone are
 * found from the bit positions.
 */
import { describe, expect, it } from "@jest/globals";
import { redactSecrets, REDACTED } from "../../src/github/index.js";

function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=:@%&?# .~!$*'()[]{}é€🔑";

function randomString(random: () => number, min: number, max: number, alphabet = ALPHABET): string {
  const chars = [...alphabet];
  const length = min + Math.floor(random() * (max - min + 1));
  let out = "";
  for (let i = 0; i < length; i += 1) out += chars[Math.floor(random() * chars.length)] ?? "x";
  return out;
}

/** The substring of `encoded` (base64 of `prefix + secret + suffix` bytes) whose characters depend on the secret's bytes alone. */
function secretOnlyBase64(encoded: string, prefixBytes: number, secretBytes: number): string {
  const first = Math.ceil((prefixBytes * 8) / 6);
  const last = Math.floor(((prefixBytes + secretBytes) * 8) / 6) - 1;
  return encoded.slice(first, last + 1);
}

type Encoding = "plain" | "url" | "url-lower" | "hex" | "HEX" | "base64" | "base64url" | "base64-stream" | "base64url-stream";
const ENCODINGS: Encoding[] = ["plain", "url", "url-lower", "hex", "HEX", "base64", "base64url", "base64-stream", "base64url-stream"];
const toUrl = (base64: string): string => base64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/** The printed text for `secret` in `encoding`, and the part of it that must not survive. */
function encode(random: () => number, secret: string, encoding: Encoding): { printed: string; mustVanish: string } {
  const bytes = Buffer.from(secret, "utf8");
  switch (encoding) {
    case "plain":
      return { printed: secret, mustVanish: secret };
    case "url":
      return { printed: encodeURIComponent(secret), mustVanish: encodeURIComponent(secret) };
    case "url-lower": {
      const lower = encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
      return { printed: lower, mustVanish: lower };
    }
    case "hex":
      return { printed: bytes.toString("hex"), mustVanish: bytes.toString("hex") };
    case "HEX":
      return { printed: bytes.toString("hex").toUpperCase(), mustVanish: bytes.toString("hex").toUpperCase() };
    case "base64":
      return { printed: bytes.toString("base64"), mustVanish: bytes.toString("base64") };
    case "base64url":
      return { printed: toUrl(bytes.toString("base64")), mustVanish: toUrl(bytes.toString("base64")) };
    case "base64-stream":
    case "base64url-stream": {
      const prefix = Buffer.from(randomString(random, 0, 12));
      const suffix = Buffer.from(randomString(random, 0, 12));
      let stream = Buffer.concat([prefix, bytes, suffix]).toString("base64");
      if (encoding === "base64url-stream") stream = toUrl(stream);
      return { printed: stream, mustVanish: secretOnlyBase64(stream, prefix.length, bytes.length) };
    }
  }
}

describe("redactSecrets, property: no form of a given secret survives", () => {
  it("holds for 3,000 random secrets, encodings and surroundings", () => {
    const random = prng(0x5eed);
    for (let round = 0; round < 3000; round += 1) {
      const secret = randomString(random, 12, 48);
      const encoding = ENCODINGS[round % ENCODINGS.length] ?? "plain";
      const { printed, mustVanish } = encode(random, secret, encoding);
      const before = randomString(random, 0, 40);
      const after = randomString(random, 0, 40);
      const text = `${before}${printed}${after}\nnext line`;
      const out = redactSecrets(text, [randomString(random, 12, 30), secret]);
      const context = { round, encoding, secret, text, out };
      expect({ ...context, leaked: out.includes(mustVanish) }).toEqual({ ...context, leaked: false });
      expect(out).toContain(REDACTED);
      expect(out.endsWith("\nnext line")).toBe(true);
    }
  });

  it("removes a token refreshed after the list was handed over (the list is read on every call)", () => {
    const tokens: string[] = ["ghs_first0000000000000000000000"];
    const later = "opaque-refreshed-token-value";
    expect(redactSecrets(`x ${later}`, tokens)).toBe(`x ${later}`);
    tokens.push(later);
    expect(redactSecrets(`x ${encodeURIComponent(`x-access-token:${later}`)}`, tokens)).toBe(`x x-access-token%3A${REDACTED}`);
  });
});

describe("redactSecrets: PEM blocks", () => {
  const key = [
    "-----BEGIN RSA PRIVATE KEY-----",
    "MIIEowIBAAKCAQEAx7b0Y3Jt5c2VjcmV0a2V5bWF0ZXJpYWxoZXJl",
    "c2VjcmV0a2V5bWF0ZXJpYWxoZXJlc2VjcmV0a2V5bWF0ZXJpYWw=",
    "-----END RSA PRIVATE KEY-----",
  ];

  it("removes a whole block, one cut at its end and one cut at its start", () => {
    expect(redactSecrets(`a\n${key.join("\n")}\nb`)).toBe(`a\n${REDACTED}\nb`);
    expect(redactSecrets(`a\n${key.slice(0, 3).join("\n")}`)).toBe(`a\n${REDACTED}`);
    expect(redactSecrets(`${key.slice(1).join("\n")}\nb`)).toBe(`${REDACTED}\nb`);
    expect(redactSecrets(`${key.slice(1).join("\r\n")}\r\nb`)).toBe(`${REDACTED}\r\nb`);
    expect(redactSecrets(`PRIVATE_KEY=${key[0]}`)).toBe(`PRIVATE_KEY=${REDACTED}`);
  });

  it("leaves prose with dashes alone", () => {
    expect(redactSecrets("----- summary -----\nok")).toBe("----- summary -----\nok");
  });
});
