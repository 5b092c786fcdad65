/**
 * Issue 30 (8): with the App not root (the Dockerfile's case), a step owns the files the App
 * owns (its uid inside the sandbox maps to the App's), so it can `chmod u+w` a file of its
 * worktree's node_modules and edit it. Where that file is a hard link of the snapshot, the next
 * story gets the edit. The tests run as root, so the App here is a child process running as
 * `nobody` (setpriv), loading the compiled App (dist/, built by the test setup from these
 * sources); the edits are made by real sandboxed steps of that App.
 */
import { chownSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { exec } from "../../src/exec/index.js";
import { shareFlags } from "../../src/workspace/provision/snapshot.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

const NOBODY = 65534;
const DIST = join(import.meta.dirname, "..", "..", "dist");

/** The App's part: save from one worktree, let steps poison their copies, hand out to the next. */
const APP = `
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
const { saveSnapshot, linkSnapshot } = await import(${JSON.stringify(pathToFileURL(join(DIST, "workspace", "provision", "snapshot.js")).href)});
const { Sandbox, sandboxSettingsFromEnv } = await import(${JSON.stringify(pathToFileURL(join(DIST, "sandbox", "index.js")).href)});
const root = process.argv[2];
const sandbox = new Sandbox(sandboxSettingsFromEnv({}));
const plan = { eligible: true, dir: join(root, "snapshots", "key"), key: "key", scopeDir: join(root, "snapshots") };
const file = "node_modules/left/index.js";
async function poison(worktree) {
  const step = await sandbox.shell("chmod u+w " + file + " && echo \\"module.exports = 'poisoned';\\" > " + file, { cwd: worktree }, { purpose: "agent", network: false, writable: [worktree] });
  return step.exitCode === 0 && step.sandboxed;
}
if (!(await saveSnapshot(plan, join(root, "a")))) throw new Error("the snapshot was not saved");
// The story that saved the snapshot goes on: its agent edits its own dependency.
const poisonedA = await poison(join(root, "a"));
mkdirSync(join(root, "b"));
await linkSnapshot(plan, join(root, "b"));
const poisonedB = await poison(join(root, "b"));
mkdirSync(join(root, "c"));
await linkSnapshot(plan, join(root, "c"));
console.log(JSON.stringify({ uid: process.getuid(), poisonedA, poisonedB, c: readFileSync(join(root, "c", file), "utf8"), snapshot: readFileSync(join(plan.dir, file), "utf8") }));
`;

/** The first folder above `path` that other users cannot enter (mode without o+x), if any. */
function closedToOthers(path: string): string | undefined {
  for (let dir = path; ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

describe("dependency snapshots with the App not root", () => {
  it("an edit a step makes to its worktree's dependency never reaches the snapshot or the next worktree", async () => {
    // The App here runs as nobody and loads this clone's dist/: every folder above it must let others in.
    const closed = closedToOthers(DIST);
    if (closed !== undefined)
      throw new Error(
        `the App runs as nobody here and loads ${DIST}, but ${closed} does not let other users in: chmod o+x it, or clone the project under a folder others can enter`,
      );
    const root = makeTempDir("harness-snapshot-nonroot-");
    mkdirSync(join(root, "a", "node_modules", "left"), { recursive: true });
    writeFileSync(join(root, "a", "node_modules", "left", "index.js"), "module.exports = 'clean';\n");
    writeFileSync(join(root, "app.mjs"), APP);
    for (const path of [
      root,
      join(root, "a"),
      join(root, "a", "node_modules"),
      join(root, "a", "node_modules", "left"),
      join(root, "a", "node_modules", "left", "index.js"),
      join(root, "app.mjs"),
    ]) {
      chownSync(path, NOBODY, NOBODY);
    }
    const setpriv = ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"];
    const run = await exec([...setpriv, process.execPath, join(root, "app.mjs"), root], {
      cwd: root,
      env: { set: { HOME: root } },
      captureStdout: true,
      timeoutMs: 120_000,
    });
    if (run.spawnError !== undefined) throw new Error(`setpriv is needed to run the App as another user: apt-get install util-linux (${run.spawnError})`);
    expect({ exitCode: run.exitCode, tail: run.exitCode === 0 ? "" : run.tail }).toEqual({ exitCode: 0, tail: "" });
    const seen = JSON.parse(run.stdout?.toString() ?? "") as Record<string, unknown>;
    // The steps did edit their own copies: the attack ran, as a non-root App's step can.
    expect(seen).toMatchObject({ uid: NOBODY, poisonedA: true, poisonedB: true });
    expect(seen.c).toBe("module.exports = 'clean';\n");
    expect(seen.snapshot).toBe("module.exports = 'clean';\n");
  });

  it("shares inodes only as root", () => {
    expect(shareFlags(true)).toEqual(["-al"]);
    expect(shareFlags(false)).toEqual(["-a", "--reflink=auto"]);
  });
});
