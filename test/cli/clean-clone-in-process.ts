/** `harness clean-clone` run in this process on a repository, its suite `node test.js`: exit code and what it printed. */
import { runCli } from "../support/cli.js";

export async function cleanCloneNodeTest(repo: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(["clean-clone", "--command", "node test.js", "--timeout-ms", "60000"], repo);
}
