/**
 * The line `harness serve` prints at start: where GitHub must send webhooks. Pure, from the
 * environment Probot also reads (HOST, PORT, WEBHOOK_PATH, WEBHOOK_PROXY_URL).
 */
export const DEFAULT_WEBHOOK_PATH = "/api/github/webhooks";

export function webhookNotice(env: Readonly<Record<string, string | undefined>>): string {
  const host = env.HOST?.trim() || "localhost";
  const port = env.PORT?.trim() || "3000";
  const path = env.WEBHOOK_PATH?.trim() || DEFAULT_WEBHOOK_PATH;
  const local = `http://${host}:${port}${path}`;
  const proxy = env.WEBHOOK_PROXY_URL?.trim();
  if (proxy) {
    return `harness serve: webhooks arrive through the proxy ${proxy} (forwarded to ${local}); set the App's Webhook URL to ${proxy}\n`;
  }
  return (
    `harness serve: webhooks are received at ${local}\n` +
    `  Set the App's Webhook URL to this address as GitHub reaches it: https://<your host>${path} behind a\n` +
    `  TLS proxy or tunnel, or set WEBHOOK_PROXY_URL to a smee.io channel to receive them on this machine.\n`
  );
}
