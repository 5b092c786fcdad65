#!/usr/bin/env node
// The `harness` command: runs the compiled CLI from dist/ (built by `npm run build`, which
// `npm ci` runs through `prepare`). No TypeScript loader runs in production.
import { existsSync } from "node:fs";

const cli = new URL("../dist/cli.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write("harness: dist/cli.js is missing; run `npm run build` (or `npm ci`, which builds) first.\n");
  process.exit(2);
}
const { main } = await import(cli.href);
process.exitCode = await main(process.argv.slice(2));
