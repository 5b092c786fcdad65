import { parseArgs } from "node:util";
import { collectHarnessStatus, renderStatusText } from "../status/index.js";
import { harnessHome } from "../workspace/index.js";
import type { CliIO } from "./usage.js";

const HELP = `harness status [--json]

Lists the App's queued and running jobs, quarantined job files and GitHub writes not delivered
yet (or given up), read from HARNESS_HOME. The running App serves the same JSON at
GET /harness/status.json with "Authorization: Bearer $HARNESS_STATUS_TOKEN".
`;

/** `harness status`: what the App is doing, without reading its logs. */
export async function statusCommand(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({ args, options: { json: { type: "boolean" }, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: false });
  if (values.help) {
    io.stdout(HELP);
    return 0;
  }
  const status = await collectHarnessStatus(harnessHome(io.env));
  io.stdout(values.json ? `${JSON.stringify(status, null, 2)}\n` : renderStatusText(status));
  return 0;
}
