/** A bin folder holding the fake agent CLIs under the real names, each with its list of modes. */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { makeTempDir } from "../support/tmp.js";

export const FAKE_CLI = fileURLToPath(new URL("../fixtures/agents/fake-cli.sh", import.meta.url));

export interface FakeBin {
  dir: string;
  /** "<name> <mode>" per launch, in order. */
  calls(): string[];
}

/** Makes `claude` and `codex` (or the names given) answer with these modes, launch by launch. */
export function fakeAgentBin(modes: Record<string, string[]>): FakeBin {
  const dir = makeTempDir("harness-fake-bin-");
  for (const [name, list] of Object.entries(modes)) {
    copyFileSync(FAKE_CLI, join(dir, name));
    writeFileSync(join(dir, `${name}.modes`), `${list.join("\n")}\n`, { mode: 0o644 });
  }
  return {
    dir,
    calls: () =>
      existsSync(join(dir, "calls.log"))
        ? readFileSync(join(dir, "calls.log"), "utf8")
            .split("\n")
            .filter((line) => line !== "")
        : [],
  };
}

/** Puts `dir` first on this test process's PATH (agents and preflight look programs up there); returns the undo. */
export function prependPath(dir: string): () => void {
  const before = process.env.PATH;
  process.env.PATH = `${dir}:${before ?? ""}`;
  return () => {
    process.env.PATH = before;
  };
}
