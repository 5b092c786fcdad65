/** `harness clean-clone` run in this process on a repository, its suite `node test.js`: exit code and what it printed. */
import { main } from "../../src/cli.js";
import type { CliIO } from "../../src/cli/usage.js";

export async function cleanCloneNodeTest(repo: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io: CliIO = { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: repo, env: process.env };
  const code = await main(["clean-clone", "--command", "node test.js", "--timeout-ms", "60000"], io);
  return { code, stdout, stderr };
}
