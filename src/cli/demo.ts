/**
 * `harness demo`: runs `demo/demo.ts` (the App against the fake GitHub of the tests, a sample
 * repository and a scripted agent) and prints what a maintainer would see. It needs a clone
 * of the repository with its development dependencies (`npm ci`): the fake GitHub and the
 * TypeScript loader that runs it are development tools, so the demo is the one command that
 * loads TypeScript, and only for itself.
 */
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { UsageError, type CliIO } from "./usage.js";

const USAGE = "harness demo";
const DEMO = fileURLToPath(new URL("../../demo/demo.ts", import.meta.url));

export async function demoCommand(args: string[], io: CliIO): Promise<number> {
  if (args.length > 0) throw new UsageError(`unexpected argument '${args[0] ?? ""}'`, USAGE);
  let register: () => unknown;
  try {
    ({ register } = (await import("tsx/esm/api")) as { register: () => unknown });
  } catch {
    io.stderr("harness demo: needs the development dependencies (the fake GitHub and tsx): run it from a clone of the repository after `npm ci`.\n");
    return 2;
  }
  if (!existsSync(DEMO)) {
    io.stderr(`harness demo: ${DEMO} is missing; run it from a clone of the repository.\n`);
    return 2;
  }
  register();
  await import(pathToFileURL(DEMO).href);
  return 0;
}
