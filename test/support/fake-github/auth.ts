import { createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from "node:crypto";

/** Why a request was refused with 401: machine-readable, so tests can assert on it. */
export type AuthFailure = "missing" | "malformed" | "bad-signature" | "wrong-issuer" | "expired" | "unknown-token";

/** A credential the fake refused. */
export class FakeAuthError extends Error {
  readonly failureClass = "fake-github-auth";
  constructor(
    readonly reason: AuthFailure,
    message: string,
  ) {
    super(message);
    this.name = "FakeAuthError";
  }
}

/** An installation token the fake handed out. */
export interface IssuedToken {
  token: string;
  installationId: number;
  expiresAt: Date;
  permissions: Record<string, string>;
  issuedAt: Date;
  /** The repositories it was minted for (`repository_ids`); every one of the installation's when absent. */
  repositoryIds?: number[];
}

let processKey: { privateKeyPem: string; publicKey: KeyObject } | undefined;

/**
 * The App's RSA key pair, generated once per process: a 2048-bit key takes a few hundred
 * milliseconds, and fakes in one test process gain nothing from distinct keys.
 */
export function appKeyForProcess(): { privateKeyPem: string; publicKey: KeyObject } {
  processKey ??= generateAppKey();
  return processKey;
}

/** A fresh RSA key pair for the App; the PEM is what the App is configured with. */
export function generateAppKey(): { privateKeyPem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  // PKCS#1 ("BEGIN RSA PRIVATE KEY") is the format GitHub hands out for App keys.
  return { privateKeyPem: privateKey.export({ type: "pkcs1", format: "pem" }).toString(), publicKey };
}

/** Reads the credential of an `Authorization` header (`token X`, `Bearer X`); undefined when absent. */
export function credentialOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^(?:token|bearer)\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** Reads `user:password` of a Basic `Authorization` header. */
export function basicCredentials(header: string | undefined): { user: string; password: string } | undefined {
  const match = /^basic\s+(\S+)\s*$/i.exec(header ?? "");
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function decodeSegment(segment: string): unknown {
  return JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
}

/** GitHub refuses App JWTs that live longer than ten minutes; a little clock skew is tolerated. */
const MAX_JWT_LIFETIME_S = 600;
const CLOCK_SKEW_S = 60;

/**
 * Verifies an App JWT as GitHub does: RS256 signed by the App's key, issued by the App id,
 * not expired, not issued in the future, living at most ten minutes.
 */
export function verifyAppJwt(jwt: string, appId: number, publicKey: KeyObject, now = Date.now()): void {
  const parts = jwt.split(".");
  const [headerPart, payloadPart, signaturePart] = parts;
  if (parts.length !== 3 || !headerPart || !payloadPart || signaturePart === undefined) {
    throw new FakeAuthError("malformed", "A JSON web token could not be decoded");
  }
  let header: { alg?: unknown };
  let payload: { iss?: unknown; iat?: unknown; exp?: unknown };
  try {
    header = decodeSegment(headerPart) as typeof header;
    payload = decodeSegment(payloadPart) as typeof payload;
  } catch {
    throw new FakeAuthError("malformed", "A JSON web token could not be decoded");
  }
  if (header.alg !== "RS256") throw new FakeAuthError("malformed", "'alg' must be RS256");
  const signed = Buffer.from(`${headerPart}.${payloadPart}`);
  if (!verify("RSA-SHA256", signed, publicKey, Buffer.from(signaturePart, "base64url"))) {
    throw new FakeAuthError("bad-signature", "A JSON web token could not be decoded");
  }
  if (String(payload.iss) !== String(appId)) throw new FakeAuthError("wrong-issuer", "'Issuer' claim ('iss') must be an Integer");
  const nowS = Math.floor(now / 1000);
  if (typeof payload.exp !== "number" || typeof payload.iat !== "number") {
    throw new FakeAuthError("malformed", "'Expiration time' and 'Issued at' claims are required");
  }
  if (payload.exp <= nowS)
    throw new FakeAuthError("expired", "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires");
  if (payload.iat > nowS + CLOCK_SKEW_S)
    throw new FakeAuthError("malformed", "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued");
  if (payload.exp - payload.iat > MAX_JWT_LIFETIME_S + CLOCK_SKEW_S) {
    throw new FakeAuthError("expired", "'Expiration time' claim ('exp') is too far in the future");
  }
}

/** The installation tokens the fake issued, by value. */
export class TokenStore {
  private readonly tokens = new Map<string, IssuedToken>();

  private readonly planned: string[] = [];

  /**
   * Makes the next token issued carry `value` instead of a fresh `ghs_` one. GitHub does not
   * promise the format: a token no pattern recognises can only be redacted by its value.
   */
  issueNextAs(value: string): void {
    this.planned.push(value);
  }

  /** Issues a new `ghs_` token (or a planned one) for an installation, valid for `lifetimeMs` (an hour, like GitHub). */
  issue(installationId: number, permissions: Record<string, string>, lifetimeMs = 3600_000, repositoryIds?: number[]): IssuedToken {
    const token = this.planned.shift() ?? `ghs_${randomBytes(27).toString("base64url").replace(/[-_]/g, "x").slice(0, 36)}`;
    const issued: IssuedToken = { token, installationId, permissions, issuedAt: new Date(), expiresAt: new Date(Date.now() + lifetimeMs) };
    if (repositoryIds) issued.repositoryIds = [...repositoryIds];
    this.tokens.set(token, issued);
    return issued;
  }

  /** The token's record when it is known and not expired; throws {@link FakeAuthError} otherwise. */
  check(token: string | undefined, now = Date.now()): IssuedToken {
    if (!token) throw new FakeAuthError("missing", "Requires authentication");
    const issued = this.tokens.get(token);
    if (!issued) throw new FakeAuthError("unknown-token", "Bad credentials");
    if (issued.expiresAt.getTime() <= now) throw new FakeAuthError("expired", "Bad credentials");
    return issued;
  }

  /** Makes a token expire now, so tests can check that the App asks for a new one. */
  expire(token: string): void {
    const issued = this.tokens.get(token);
    if (issued) issued.expiresAt = new Date(Date.now() - 1);
  }

  all(): IssuedToken[] {
    return [...this.tokens.values()];
  }
}

/** The public half of a PEM private key (handy when a test brings its own key). */
export function publicKeyOf(privateKeyPem: string): KeyObject {
  return createPublicKey(privateKeyPem);
}
