/**
 * The App's own secrets, as values the redactor removes from everything posted: the webhook
 * secret and the private key — whole, as Probot reads it (PEM, or PEM in base64), and line by
 * line, since an output tail may hold a single line of it.
 */

/** Lines of a PEM body shorter than this are not redacted by value (the last one may be short). */
const MIN_PEM_LINE = 16;

/** The values to redact for a webhook secret and a private key (either may be missing). */
export function appSecretValues(args: { webhookSecret?: string; privateKey?: string }): string[] {
  const values = new Set<string>();
  const secret = args.webhookSecret?.trim();
  if (secret) values.add(secret);
  const key = args.privateKey?.trim();
  if (key) {
    values.add(key);
    const pem = key.includes("-----BEGIN") ? key : Buffer.from(key, "base64").toString("utf8");
    if (pem.includes("-----BEGIN")) {
      // Probot accepts "\n" written as the two characters backslash-n in an env file.
      const lines = pem
        .replace(/\\n/g, "\n")
        .split(/\r?\n/)
        .map((line) => line.trim());
      const body = lines.filter((line) => line !== "" && !line.startsWith("-----"));
      for (const line of body) if (line.length >= MIN_PEM_LINE) values.add(line);
      if (body.length > 0) values.add(body.join(""));
    }
  }
  return [...values];
}
