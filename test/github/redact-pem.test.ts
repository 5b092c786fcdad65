/**
 * A PEM block cut by an output tail's start or end: the key's base64 lines go with the header
 * or footer, and the text around them stays. Each case below was found by mutation testing
 * (`npm run mutate`): a redactor that removes too little leaks key material, one that
 * removes too much eats the suite's own output around it, which is what a reader debugging a
 * failure came for.
 */
import { describe, expect, it } from "@jest/globals";
import { redactSecrets, REDACTED } from "../../src/github/index.js";

const HEADER = "-----BEGIN RSA PRIVATE KEY-----";
const FOOTER = "-----END RSA PRIVATE KEY-----";
// Between them every base64 character: both cases of letters up to z, digits up to 9, + / and =.
const KEY = ["MIIEowIBAAKCAQEAz9+/x7b0Y3Jt5c2VjcmV0a2V5bWF0ZXJpYWxoZXJl", "c2VjcmV0a2V5bWF0ZXJpYWxoZXJlc2VjcmV0a2V5bWF0ZXJpYWw="];

// Lines that are not base64, each for a different reason: a space, an underscore, a letter
// beyond ASCII, a colon, a trailing full stop.
const PROSE = ["two words", "snake_case_name", "über", "status:ok", "Done."];

describe("redactSecrets: a PEM block cut at its end", () => {
  it("removes the header and the key lines, and keeps the line after them", () => {
    for (const line of PROSE) {
      expect(redactSecrets(`a\n${HEADER}\n${KEY.join("\n")}\n${line}\nb`)).toBe(`a\n${REDACTED}\n${line}\nb`);
    }
  });

  it("does so with CRLF line ends too", () => {
    expect(redactSecrets(`a\r\n${HEADER}\r\n${KEY.join("\r\n")}\r\ntwo words\r\nb`)).toBe(`a\r\n${REDACTED}\r\ntwo words\r\nb`);
  });

  it("stops at a blank line", () => {
    expect(redactSecrets(`${HEADER}\n${KEY[0]}\n\nDone`)).toBe(`${REDACTED}\n\nDone`);
  });

  it("keeps a word on the header's own line (a scanner naming what it found)", () => {
    expect(redactSecrets(`line 3: ${HEADER} found\nscan done`)).toBe(`line 3: ${REDACTED} found\nscan done`);
  });
});

describe("redactSecrets: a PEM block cut at its start", () => {
  it("removes the key lines and the footer, and keeps the line before them", () => {
    for (const line of PROSE) {
      expect(redactSecrets(`${line}\n${KEY.join("\n")}\n${FOOTER}\nb`)).toBe(`${line}\n${REDACTED}\nb`);
    }
  });

  it("stops at a blank line", () => {
    expect(redactSecrets(`Done\n\n${KEY[1]}\n${FOOTER}\nb`)).toBe(`Done\n\n${REDACTED}\nb`);
  });

  it("removes a footer the tail starts with", () => {
    expect(redactSecrets(`${FOOTER}\nb`)).toBe(`${REDACTED}\nb`);
  });

  it("keeps what precedes a footer on its own line, and the lines above it", () => {
    expect(redactSecrets(`Done\nexpected:${FOOTER}\nb`)).toBe(`Done\nexpected:${REDACTED}\nb`);
  });

  it("removes a footer cut off by the tail's end", () => {
    expect(redactSecrets(`Done.\n${KEY[0]}\n-----END RSA PRI`)).toBe(`Done.\n${REDACTED}RSA PRI`);
  });

  it("does not reach for a distant ----- when the footer has lost its closing dashes", () => {
    const output = "a line of ordinary test output, long enough to put the next rule far away\n----- summary -----\nok";
    expect(redactSecrets(`${KEY[0]}\n-----END RSA PRIVATE KEY\n${output}`)).toBe(`${REDACTED}RSA PRIVATE KEY\n${output}`);
  });
});

describe("redactSecrets: the shortest secret redacted by value", () => {
  it("is MIN_SECRET_LENGTH (4) characters", () => {
    expect(redactSecrets("pin 4321 accepted", ["4321"])).toBe(`pin ${REDACTED} accepted`);
    expect(redactSecrets("pin 321 accepted", ["321"])).toBe("pin 321 accepted");
  });
});

describe("redactSecrets: a PEM block written with escaped line breaks (a key inside JSON or a quoted string)", () => {
  const LF = "\\n";
  const CRLF = "\\r\\n";

  it("removes a block cut before its header, up to the quote that follows it", () => {
    const text = `{"key": "${KEY[0]!.slice(9)}${LF}${KEY[1]}${LF}${FOOTER}${LF}", "ok": true}`;
    const out = redactSecrets(text);
    expect(out).toBe(`{"key": "${REDACTED}${LF}", "ok": true}`);
    for (const line of KEY) expect(out).not.toContain(line.slice(10, 30));
  });

  it("removes a block cut after its header, and keeps what follows the key", () => {
    expect(redactSecrets(`PRIVATE_KEY="${HEADER}${LF}${KEY.join(LF)}" next`)).toBe(`PRIVATE_KEY="${REDACTED}" next`);
    expect(redactSecrets(`PRIVATE_KEY="${HEADER}${CRLF}${KEY.join(CRLF)}${CRLF}two words"`)).toBe(`PRIVATE_KEY="${REDACTED}${CRLF}two words"`);
  });

  it("removes an escaped block cut before its header with CRLF escapes", () => {
    expect(redactSecrets(`x ${KEY[1]}${CRLF}${FOOTER}" y`)).toBe(`x ${REDACTED}" y`);
  });

  it("keeps a word ending in n before an escape that is not a key", () => {
    expect(redactSecrets(`done\\nlater ${FOOTER} fin`)).toBe(`done\\nlater ${REDACTED} fin`);
  });

  // A key line has 64 characters; a run of at least 16 next to a quote is taken for key material.
  const run = (length: number): string => "A".repeat(length);

  it("takes a run of 16 base64 characters ending at a quote for the key's last line, and keeps one of 15", () => {
    expect(redactSecrets(`"${HEADER}${LF}${run(16)}" x`)).toBe(`"${REDACTED}" x`);
    expect(redactSecrets(`"${HEADER}${LF}${run(15)}" x`)).toBe(`"${REDACTED}${LF}${run(15)}" x`);
  });

  it("takes a run of 16 base64 characters starting after a quote for the key's first line, and keeps one of 15", () => {
    expect(redactSecrets(`"${run(16)}${LF}${FOOTER}" x`)).toBe(`"${REDACTED}" x`);
    expect(redactSecrets(`"${run(15)}${LF}${FOOTER}" x`)).toBe(`"${run(15)}${LF}${REDACTED}" x`);
    // The escaped break is CRLF, or LF after a line that ends in r (a base64 letter).
    expect(redactSecrets(`"${run(20)}${CRLF}${FOOTER}" x`)).toBe(`"${REDACTED}" x`);
    expect(redactSecrets(`"${run(20)}r${LF}${FOOTER}" x`)).toBe(`"${REDACTED}" x`);
  });

  it("does not take a run next to a quote for key material where the breaks are real", () => {
    expect(redactSecrets(`"${HEADER}\n${run(20)}" x`)).toBe(`"${REDACTED}\n${run(20)}" x`);
    expect(redactSecrets(`"${run(20)}\n${FOOTER}" x`)).toBe(`"${run(20)}\n${REDACTED}" x`);
  });

  it("removes a short key line cut by the tail's end or start, whatever the breaks", () => {
    for (const lineBreak of [LF, CRLF, "\n", "\r\n"]) {
      expect(redactSecrets(`${HEADER}${lineBreak}AB`)).toBe(REDACTED);
      expect(redactSecrets(`AB${lineBreak}${FOOTER} x`)).toBe(`${REDACTED} x`);
    }
  });

  it("takes only a line feed, CRLF, or their escapes for a line break after a header", () => {
    for (const notABreak of ["\r", "\\t", "\\r", "\\r\\t", "\\rxn", "x\n"]) {
      expect(redactSecrets(`${HEADER}${notABreak}AB`)).toBe(`${REDACTED}${notABreak}AB`);
    }
  });

  it("takes a backslash for an escaped break only before n, or before r and an escaped n", () => {
    // An escape that is not a line break, then one that is: the key line is not the header's.
    expect(redactSecrets(`${HEADER}\\t${LF}AB`)).toBe(`${REDACTED}\\t${LF}AB`);
    // A character other than a backslash before an n is no escape either.
    expect(redactSecrets(`${HEADER}\nAB no`)).toBe(`${REDACTED}\nAB no`);
  });

  it("takes only an escaped n (or r and n) before a footer for an escaped break", () => {
    expect(redactSecrets(`ab\\t${FOOTER} x`)).toBe(`ab\\t${REDACTED} x`);
    expect(redactSecrets(`Golden${FOOTER} x`)).toBe(`Golden${REDACTED} x`);
    expect(redactSecrets(`"${run(20)}\\t${LF}${FOOTER}" x`)).toBe(`"${run(20)}\\t${LF}${REDACTED}" x`);
  });
});

describe("redactSecrets: a PEM block with CRLF line ends cut at its start", () => {
  it("removes the key lines and the footer, and keeps the line before them", () => {
    for (const line of PROSE) {
      expect(redactSecrets(`${line}\r\n${KEY.join("\r\n")}\r\n${FOOTER}\r\nb`)).toBe(`${line}\r\n${REDACTED}\r\nb`);
    }
  });
});
