/**
 * Mutation testing of the guard modules (`npm run mutate`; not part of `npm test`).
 *
 * One room at a time, each against its own tests (a small machine cannot run the whole suite
 * once per mutant: every test goes through src/exec and src/workspace):
 *   MUTATE_ROOM=exec npm run mutate      (also workspace, queue, outbox, github, pipeline)
 * Without MUTATE_ROOM every guard module is mutated against the whole suite less the end-to-end
 * tests (those run the code in other processes, where no coverage reaches Stryker).
 * Jest runs as in `npm test`: ESM through ts-jest, with --experimental-vm-modules.
 * `--mutate <files>` narrows a room to some of its files (issue 16's guard files were run that
 * way, file by file).
 * `MUTATE_TESTS=github/redact,github/redact-property` narrows the room's tests to those files
 * (paths under test/, without `.test.ts`), so a file's mutants run against its own tests: on a
 * loaded machine a room's heavier tests (probot, real git) cost seconds per mutant.
 * `MUTATE_REPORT=<name>` names the JSON report (`reports/mutation/<name>.json`; default the room).
 */
const ROOMS = {
  exec: { mutate: ["src/exec/**/*.ts"], tests: ["exec", "agents"] },
  workspace: { mutate: ["src/workspace/**/*.ts"], tests: ["workspace", "runner/repo-cache"] },
  queue: { mutate: ["src/queue/**/*.ts", "src/files/**/*.ts"], tests: ["queue", "files"] },
  outbox: { mutate: ["src/outbox/**/*.ts"], tests: ["outbox"] },
  github: {
    mutate: ["src/github/redact.ts", "src/github/triggers/**/*.ts", "!src/github/triggers/admission.ts", "!src/github/triggers/permissions.ts"],
    tests: ["github"],
  },
  pipeline: { mutate: ["src/pipeline/stage.ts", "src/pipeline/coordinator.ts", "src/pipeline/checks.ts"], tests: ["pipeline"] },
};
const room = process.env.MUTATE_ROOM;
if (room !== undefined && !(room in ROOMS)) throw new Error(`MUTATE_ROOM must be one of ${Object.keys(ROOMS).join(", ")}; got '${room}'`);
const chosen = room === undefined ? undefined : ROOMS[room];
const narrowed = process.env.MUTATE_TESTS?.split(",")
  .map((name) => name.trim())
  .filter((name) => name !== "");
if (narrowed !== undefined && chosen === undefined) throw new Error("MUTATE_TESTS narrows a room's tests: set MUTATE_ROOM too");
const testFolders = narrowed?.length ? narrowed : chosen?.tests;

export default {
  testRunner: "jest",
  jest: {
    projectType: "custom",
    configFile: "jest.config.js",
    config: chosen
      ? { testMatch: testFolders.map((folder) => `<rootDir>/test/${folder}{/**/*,}.test.ts`) }
      : { testPathIgnorePatterns: ["/node_modules/", "/test/e2e/", "/test/support/"] },
    enableFindRelatedTests: false,
  },
  testRunnerNodeArgs: ["--experimental-vm-modules"],
  coverageAnalysis: "perTest",
  mutate: [...(chosen ? chosen.mutate : Object.values(ROOMS).flatMap((r) => r.mutate)), "!src/**/index.ts"],
  ignoreStatic: true,
  concurrency: 2,
  timeoutMS: 30000,
  timeoutFactor: 2,
  dryRunTimeoutMinutes: 40,
  reporters: ["clear-text", "progress-append-only", "json"],
  jsonReporter: { fileName: `reports/mutation/${process.env.MUTATE_REPORT ?? room ?? "all"}.json` },
  tempDirName: ".stryker-tmp",
  // Runs side by side name their own sandboxes (--tempDirName); none copies another's, nor the reports.
  ignorePatterns: [".stryker-tmp*", "reports"],
  cleanTempDir: "always",
};
