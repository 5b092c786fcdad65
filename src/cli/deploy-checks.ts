/**
 * What an operator gets wrong deploying the App, said in one line before anything starts: a
 * private key an env file kept in quotes (Docker's `--env-file` and compose's `env_file` keep
 * quotes and backslashes as written), and a data folder the App's user cannot write (a
 * bind-mounted folder owned by root). Both would otherwise surface as a stack trace, or as a
 * running App that cannot sign a single request.
 */
import { createPrivateKey } from "node:crypto";
import { statSync } from "node:fs";
import { claimHarnessHome, HarnessHomeInUseError, type HomeClaim } from "../queue/index.js";
import { UsageError, type CliIO } from "./usage.js";

/** The key as Probot reads PRIVATE_KEY: base64 decoded when it is base64, `\n` escapes turned into newlines. */
function asProbotReadsIt(value: string): string {
  const decoded = Buffer.from(value, "base64").toString("base64") === value ? Buffer.from(value, "base64").toString() : value;
  return decoded.includes("\\n") ? decoded.replace(/\\n/g, "\n") : decoded;
}

/** Throws a {@link UsageError} naming what is wrong with PRIVATE_KEY, when it is set and no key can be read from it. */
export function checkPrivateKey(env: NodeJS.ProcessEnv, usage: string): void {
  const value = env.PRIVATE_KEY;
  if (!value) return;
  const pem = asProbotReadsIt(value.trim());
  try {
    // Probot adds the newlines of a key pasted on one line with spaces; that form needs no check.
    if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----\n/.test(pem)) return;
    createPrivateKey(pem);
  } catch (error) {
    const quoted = /^["']/.test(value.trim()) ? " (it starts with a quote: env files keep quotes as written; remove them)" : "";
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(
      `PRIVATE_KEY is not a readable private key${quoted}: ${reason}; give the .pem file as one line of base64 (base64 -w0 key.pem) or with \\n for its newlines, or set PRIVATE_KEY_PATH`,
      usage,
    );
  }
}

/**
 * Claims HARNESS_HOME for this process; says in one line why it cannot (another process holds
 * it, or this user may not write there) and returns undefined.
 */
export async function claimHomeOrSay(home: string, command: string, io: CliIO): Promise<HomeClaim | undefined> {
  try {
    return await claimHarnessHome(home);
  } catch (error) {
    if (error instanceof HarnessHomeInUseError) {
      io.stderr(`harness ${command}: ${error.message}\n`);
      return undefined;
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM" && code !== "EROFS") throw error;
    const uid = process.getuid?.() ?? -1;
    let owner = "";
    try {
      const stat = statSync(home);
      owner = `, owned by uid ${stat.uid}`;
    } catch {
      // Not there, or not even readable: the message below says enough.
    }
    io.stderr(
      `harness ${command}: HARNESS_HOME ${home} is not writable by this user (uid ${uid}${owner}; ${code}): chown it to uid ${uid}, or use a named volume, which takes the image's ownership\n`,
    );
    return undefined;
  }
}
