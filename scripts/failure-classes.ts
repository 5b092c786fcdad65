/** Rewrites the README's table of failure classes from the one list (`npm run docs:failure-classes`). */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { withFailureClassTable } from "../src/github/report/index.js";

const readme = fileURLToPath(new URL("../README.md", import.meta.url));
writeFileSync(readme, withFailureClassTable(readFileSync(readme, "utf8")));
