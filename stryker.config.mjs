/**
 * Mutation testing of the guard modules (`npm run mutate`; not part of `npm test`). One room at
 * a time on a small machine: `npm run mutate -- --mutate "src/exec/**\/*.ts"`.
 * Jest runs as in `npm test` (ESM through ts-jest, with --experimental-vm-modules); each mutant
 * runs only the tests that cover it.
 */
export default {
  testRunner: "jest",
  jest: { projectType: "custom", configFile: "jest.config.js", enableFindRelatedTests: false },
  testRunnerNodeArgs: ["--experimental-vm-modules"],
  coverageAnalysis: "perTest",
  mutate: [
    "src/exec/**/*.ts",
    "src/workspace/**/*.ts",
    "src/queue/**/*.ts",
    "src/github/redact.ts",
    "src/github/triggers/**/*.ts",
    "src/pipeline/stage.ts",
    "src/pipeline/coordinator.ts",
    "src/pipeline/checks.ts",
    "!src/**/index.ts",
  ],
  ignoreStatic: true,
  concurrency: 2,
  timeoutMS: 30000,
  dryRunTimeoutMinutes: 40,
  timeoutFactor: 3,
  reporters: ["clear-text", "progress-append-only", "json"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
};
