/**
 * A networked step leaves the host's mounts alone. slirp4netns's own sandbox makes a mount
 * namespace and detaches the old root; run as root beside shared mount points, those unmounts
 * propagated back and took the host's bind mounts with them (Podman's network namespaces
 * vanished mid-run). The scene is built in a mount namespace of the test's own: a shared tmpfs
 * with a bind mount under it, then the compiled App runs a networked step (and makes its spare
 * namespace) there, and the bind mount must still be there afterwards.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { exec } from "../../src/exec/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

it("a networked step (and its spare namespace) does not unmount the host's shared bind mounts", async () => {
  const dir = makeTempDir();
  const sandboxModule = pathToFileURL(resolve("dist", "sandbox", "index.js")).href;
  const step = join(dir, "step.mjs");
  writeFileSync(
    step,
    [
      `const { sandboxFromEnv, sparesMade, dropSpares } = await import(${JSON.stringify(sandboxModule)});`,
      "const sandbox = sandboxFromEnv();",
      `const result = await sandbox.run(["/bin/sh", "-c", "true"], { cwd: ${JSON.stringify(dir)} }, { purpose: "agent", network: true, writable: [${JSON.stringify(dir)}] });`,
      "await sparesMade();",
      "await dropSpares();",
      "console.log(`step exit ${result.exitCode} net ${result.net}`);",
    ].join("\n"),
  );
  const scene = join(dir, "scene");
  const script = [
    "set -e",
    `mkdir -p ${scene}`,
    `mount -t tmpfs scene ${scene}`,
    `mount --make-shared ${scene}`,
    `mkdir ${scene}/source ${scene}/target`,
    `mount --bind ${scene}/source ${scene}/target`,
    `mountpoint -q ${scene}/target && echo "before: mounted"`,
    `${JSON.stringify(process.execPath)} ${JSON.stringify(step)}`,
    // slirp4netns's unmounts happen while it starts; by now every stack has started and ended.
    `mountpoint -q ${scene}/target && echo "after: mounted" || echo "after: gone"`,
  ].join("\n");
  // As root, a private mount namespace; otherwise one inside a user namespace (where the App is root too).
  const asRoot = process.getuid?.() === 0;
  const unshare = ["unshare", ...(asRoot ? [] : ["--user", "--map-root-user"]), "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script];
  const result = await exec(unshare, { cwd: dir, captureStdout: true, timeoutMs: 120_000 });
  const out = result.stdout?.toString() ?? "";
  expect({ out, tail: result.tail, exitCode: result.exitCode }).toMatchObject({ exitCode: 0 });
  expect(out).toMatch(/^before: mounted$/m);
  expect(out).toMatch(/^step exit 0 net own$/m);
  expect(out).toMatch(/^after: mounted$/m);
});
