/**
 * Headless Chromium from Debian's `chromium` package, for tests that look at a page as a
 * person would. A missing browser fails the test with the command that installs it.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { makeTempDir } from "../support/tmp.js";

export const CHROMIUM = "/usr/bin/chromium";

/** The flags that keep Chromium off the network and out of any profile but a fresh one. */
function flags(profile: string): string[] {
  return [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    `--user-data-dir=${profile}`,
  ];
}

function requireChromium(): void {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` (.ci/run does)`);
}

/** The page's DOM after it loaded, as Chromium serialises it. */
export async function dumpDom(url: string): Promise<string> {
  requireChromium();
  const result = await exec([CHROMIUM, ...flags(makeTempDir("harness-chromium-")), "--dump-dom", url], {
    cwd: makeTempDir("harness-chromium-cwd-"),
    captureStdout: true,
    timeoutMs: 120_000,
  });
  if (result.exitCode !== 0) throw new Error(`chromium --dump-dom exited ${String(result.exitCode)}: ${result.tail}`);
  return result.stdout?.toString("utf8") ?? "";
}

/** A PNG screenshot of the page at `url`, written to `path`. */
export async function screenshot(url: string, path: string, size = "1200,900"): Promise<void> {
  requireChromium();
  const dir = makeTempDir("harness-chromium-shot-");
  const result = await exec([CHROMIUM, ...flags(join(dir, "profile")), `--window-size=${size}`, `--screenshot=${path}`, url], { cwd: dir, timeoutMs: 120_000 });
  if (result.exitCode !== 0 || !existsSync(path)) throw new Error(`chromium --screenshot failed (exit ${String(result.exitCode)}): ${result.tail}`);
}
