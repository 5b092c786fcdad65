/**
 * The forms a secret takes in text: itself, URL-encoded, hex, base64 and base64url — the last
 * two also where the secret sits inside a longer encoded stream (at each of the three byte
 * alignments, only the characters that depend on the secret's bytes alone), and git's Basic
 * header of a token. Forms are memoised: the reporter redacts with the same secrets on every post.
 */

/** Encoded fragments shorter than this are not redacted: they would match ordinary text. */
export const MIN_FORM_LENGTH = 8;

const cache = new Map<string, readonly string[]>();
const CACHE_LIMIT = 256;

function toBase64Url(base64: string): string {
  return base64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The base64 characters of `secret` placed after `offset` other bytes of a stream, keeping
 * only characters whose six bits all come from the secret.
 */
export function base64Core(secret: Buffer, offset: 0 | 1 | 2): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), secret])
    .toString("base64")
    .replace(/=+$/, "");
  const total = offset + secret.length;
  // Character i carries bits [6i, 6i + 6) of the stream; it is the secret's alone when those bits lie in its bytes.
  const first = Math.ceil((offset * 8) / 6);
  const last = Math.floor((total * 8) / 6) - 1;
  return last >= first ? encoded.slice(first, last + 1) : "";
}

function percentEncodedLower(value: string): string {
  return encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
}

/** Every form of `value` worth redacting, longest first; empty for an empty value. */
export function secretForms(value: string): readonly string[] {
  const cached = cache.get(value);
  if (cached) return cached;
  const bytes = Buffer.from(value, "utf8");
  const forms = new Set<string>([value]);
  forms.add(encodeURIComponent(value));
  forms.add(percentEncodedLower(value));
  forms.add(encodeURIComponent(value).replace(/%20/g, "+"));
  forms.add(bytes.toString("hex"));
  forms.add(bytes.toString("hex").toUpperCase());
  const base64 = bytes.toString("base64");
  forms.add(base64);
  forms.add(toBase64Url(base64));
  for (const offset of [0, 1, 2] as const) {
    const core = base64Core(bytes, offset);
    forms.add(core);
    forms.add(core.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  // A token also travels base64-encoded in git's Basic authorization header.
  forms.add(Buffer.from(`x-access-token:${value}`).toString("base64"));
  const result = [...forms].filter((form) => form === value || form.length >= MIN_FORM_LENGTH).sort((a, b) => b.length - a.length);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(value, result);
  return result;
}
