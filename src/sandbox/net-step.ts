/**
 * Everything a networked step needs around its bubblewrap command: the destinations opened
 * for it (names resolved now, so a rule names addresses), its rule files and resolver in its
 * scratch folder, the egress proxy when the operator restricts hosts, and the launcher.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import { join } from "node:path";
import { startEgressProxy, systemResolve, type EgressProxy, type Resolve } from "./egress-proxy.js";
import { endpointsOf, joinNamespaceArgv, netLauncherArgv, type NetTools } from "./net-launch.js";
import { afterStep, prepareSpare, SPARE_STOCK, takeSpare, type SpareRecipe } from "./net-spares.js";
import { isLoopback, netRules, type OpenedDestination } from "./net-policy.js";
import type { NetSettings } from "./net-settings.js";

/** The network a step ran with: none, its own namespace (direct, or only through the egress proxy), or the host's. */
export type NetPolicy = "none" | "own" | "egress" | "host";

/** A networked step made ready to launch. */
export interface NetStep {
  policy: NetPolicy;
  /** Variables the step gets (the proxy's address). */
  env: Record<string, string>;
  /** The file bubblewrap shows as /etc/resolv.conf. */
  resolvConf: string;
  /** Wraps bubblewrap's command line in the launcher. */
  launch(boxed: readonly string[]): string[];
  /** Told that the step's agent idles (waits on its model): a step that put off beginning the next spare begins it now. */
  idle(): void;
  /** Stops the proxy; the refusals it wrote into the step's log. */
  finish(): Promise<string[]>;
}

/** The destinations `HARNESS_NET_ALLOW` opens, resolved: routed ones, and ports of the host's loopback. */
async function openedDestinations(settings: NetSettings, resolve: Resolve): Promise<{ opened: OpenedDestination[]; loopbackPorts: number[] }> {
  const opened: OpenedDestination[] = [];
  const loopbackPorts: number[] = [];
  for (const entry of settings.allow) {
    if (entry.kind === "cidr") {
      opened.push({ family: entry.family, cidr: `${entry.address}/${entry.prefix}` });
      continue;
    }
    let addresses: string[];
    try {
      addresses = isIP(entry.host) !== 0 ? [entry.host] : await resolve(entry.host);
    } catch {
      addresses = []; // a name that does not resolve opens nothing
    }
    for (const address of addresses) {
      const family = isIP(address) as 4 | 6;
      if (isLoopback(address)) loopbackPorts.push(entry.port);
      opened.push({ family, cidr: `${address}/${family === 4 ? 32 : 128}`, port: entry.port });
    }
  }
  return { opened, loopbackPorts: [...new Set(loopbackPorts)] };
}

/** The namespace a step is made with: its rules, and the host ports it reaches (the proxy's among them). */
function recipeOf(tools: NetTools, opened: OpenedDestination[], loopbackPorts: number[], proxyPort: number | undefined): SpareRecipe {
  const endpoints = endpointsOf(tools.kind);
  const hostPorts = [...loopbackPorts, ...(proxyPort !== undefined ? [proxyPort] : [])];
  const rules = netRules(endpoints, opened, { proxyPorts: proxyPort !== undefined ? [proxyPort] : [], blockAll: proxyPort !== undefined });
  // slirp4netns shows the host's loopback at its own address: the rules open only the forwarded ports there.
  const loopbackRules =
    tools.kind === "slirp4netns"
      ? loopbackPorts.map((port) => `rule add pref 100 to ${endpoints.hostLoopback}/32 ipproto tcp dport ${port} lookup main\n`).join("")
      : "";
  return { tools, hostPorts, rules: { v4: loopbackRules + rules.v4, v6: rules.v6 } };
}

/**
 * Makes spare namespaces for the next `steps` networked steps ahead of them (a worktree's
 * provisioning and the story's first agent), so each joins one instead of making its own. Only a
 * step without the egress proxy uses spares: with `HARNESS_NET_EGRESS_ALLOW` set this does nothing.
 */
export async function warmNetStep(settings: NetSettings, tools: NetTools, spares: SpareSpace, steps: number, resolve: Resolve = systemResolve): Promise<void> {
  if (settings.egressAllow.length > 0) return;
  const { opened, loopbackPorts } = await openedDestinations(settings, resolve);
  prepareSpare(recipeOf(tools, opened, loopbackPorts, undefined), spares.scratchRoot, spares.prefix, steps);
}

/** Where spare namespaces are made, and the prefix that lets a killed App's leftovers be found; none without. */
export interface SpareSpace {
  scratchRoot: string;
  prefix: string;
  /**
   * Whether a step that took a spare begins the next only once told it idles (`NetStep.idle`),
   * or at its end if it never does (an agent); without it, at once.
   */
  refillWhenIdle?: boolean;
}

function refillNow(recipe: SpareRecipe, spares: SpareSpace): void {
  try {
    prepareSpare(recipe, spares.scratchRoot, spares.prefix, SPARE_STOCK);
  } catch {
    // No spare (a full disk, a missing folder): the next step makes its own namespace.
  }
}

/**
 * Prepares a networked step in `scratch` (a folder the step does not see). Refusals of the
 * egress proxy are appended to `logPath` as they happen. With `spares`, a step without the
 * egress proxy joins a spare namespace made with its rules when one is ready, and leaves
 * {@link SPARE_STOCK} of them for the steps after it.
 */
export async function prepareNetStep(
  settings: NetSettings,
  tools: NetTools,
  scratch: string,
  logPath: string | undefined,
  resolve: Resolve = systemResolve,
  spares?: SpareSpace,
): Promise<NetStep> {
  const endpoints = endpointsOf(tools.kind);
  const { opened, loopbackPorts } = await openedDestinations(settings, resolve);
  const refused: string[] = [];
  let proxy: EgressProxy | undefined;
  if (settings.egressAllow.length > 0) {
    proxy = await startEgressProxy({
      allow: settings.egressAllow,
      opened,
      resolve,
      onRefused: (line) => {
        refused.push(line);
        if (logPath === undefined) return;
        try {
          appendFileSync(logPath, `${line}\n`);
        } catch {
          // The log is gone or full: the refusal is still in the result's tail.
        }
      },
    });
  }
  const recipe = recipeOf(tools, opened, loopbackPorts, proxy?.port);
  // The egress proxy is the step's own (its port, its log): only a step without it can use a spare.
  const spare = spares && !proxy ? await takeSpare(recipe) : undefined;
  // The next one is begun beside this step, not after it: steps come back to back (the
  // worktree's provisioning, then the first agent), and a spare begun once this one ended was
  // not ready for the next. Making one costs ~70 ms of the other core: beside an agent it waits
  // until the agent idles (on its model), or for this step's end. An agent that never idles
  // (answers that come at once: bench/agents) had its turns slowed by a spare begun 1 s in.
  let refilled = false;
  const refill = (): void => {
    if (refilled || !spare || !spares) return;
    refilled = true;
    refillNow(recipe, spares);
  };
  const now = spare && spares && !spares.refillWhenIdle ? setImmediate(refill) : undefined;
  if (!spare) {
    writeFileSync(join(scratch, "net4"), recipe.rules.v4);
    writeFileSync(join(scratch, "net6"), recipe.rules.v6);
  }
  const resolvConf = join(scratch, "resolv.conf");
  writeFileSync(resolvConf, `nameserver ${endpoints.dns}\n`);
  const env: Record<string, string> = {};
  if (proxy) {
    const url = `http://${endpoints.hostLoopback}:${proxy.port}`;
    const local = "localhost,127.0.0.1,::1";
    Object.assign(env, { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: local, no_proxy: local });
  }
  return {
    policy: proxy ? "egress" : "own",
    env,
    resolvConf,
    launch: (boxed) => (spare ? joinNamespaceArgv(tools, spare.pid, boxed) : netLauncherArgv(tools, scratch, recipe.hostPorts, boxed)),
    idle: refill,
    finish: async () => {
      // The used spare goes once this step's result is back; a step that made its own namespace
      // leaves spares for the next (one that took a spare began the next beside it, or does now).
      if (now) clearImmediate(now);
      refilled = true;
      afterStep(() => {
        spare?.release();
        if (spares && !proxy) refillNow(recipe, spares);
      });
      await proxy?.close();
      return refused;
    },
  };
}
