/**
 * Spare network namespaces, made ahead of the steps that will use them. A namespace costs
 * its stack's start, its rules and a handful of programs (about 70 ms on a 2-core machine);
 * a step that finds a spare made with exactly its rules joins it with `nsenter` instead
 * (about 3 ms). Each spare is used by one step only and dropped after it, so nothing a step
 * left in a namespace (a listener, a connection) meets a later one; taking a spare starts the
 * next. A caller that knows several networked steps come back to back (a worktree's provisioning,
 * then its first agent) asks for as many. At most {@link MAX_KINDS} kinds of rules are kept,
 * each spare for {@link IDLE_MS} unused.
 *
 * The spare's process writes its pid and its namespace's identity once its rules are set; a
 * step joins only while that pid still holds that namespace, so a spare that died (and a pid
 * used again by another process) can never hand a step the host's network.
 */
import { mkdtempSync, readFileSync, readlinkSync, rmSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exec, runInStepScope } from "../exec/index.js";
import { spareNamespaceArgv, type NetTools } from "./net-launch.js";

/** How long a spare nobody took is kept. */
export const IDLE_MS = 10 * 60 * 1000;
/** The longest a step waits for a spare being made before it makes its own namespace. */
export const WAIT_MS = 5000;
/** How many kinds of rules (sets of opened destinations) have a spare at once. */
export const MAX_KINDS = 2;
/**
 * How many spares of its rules a step that used one leaves (net-step.ts): two, because steps
 * come two in a row. An agent's seat follows the last one's at once, and the spare the last
 * agent took is replaced only once an agent idles: with one, the second seat of a story whose
 * agents never idle (bench/agents, Claude Code's tester) made its own namespace on its launch.
 */
export const SPARE_STOCK = 2;

/** What a namespace is made with: a spare serves only a step that would make the same one. */
export interface SpareRecipe {
  tools: NetTools;
  hostPorts: readonly number[];
  rules: { v4: string; v6: string };
}

/** A spare taken by a step: the pid whose namespace it joins, and its release once the step ended. */
export interface TakenSpare {
  pid: number;
  release(): void;
}

interface Spare {
  key: string;
  dir: string;
  stop: AbortController;
  /** The holder's pid and namespace once ready; undefined while being made, or when it failed. */
  holder?: { pid: number; netNs: string };
  /** The process group of the spare's helpers. */
  group?: number;
  made: Promise<void>;
  idle?: NodeJS.Timeout;
}

/** Every spare, ready or being made, oldest first. */
const spares = new Set<Spare>();
/** How many steps joined a spare (a bench's figure, and tests'). */
let spareJoins = 0;

/** How many steps joined a spare since the App started. */
export function sparesTaken(): number {
  return spareJoins;
}

/** Resolves once `promise` settled or `ms` passed. */
async function waitFor(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** Work put off until the step's result has gone back (ending a used spare, starting the next). */
const deferred = new Set<Promise<void>>();
/** Agents that hold work put off back, each until it idles or ends ({@link holdQuiet}). */
const holds = new Set<symbol>();
/** Work put off that waits for the holds to be released. */
const waiting = new Set<() => void>();
/**
 * How long work put off still waits once the last agent holding it ended: a story's next seat
 * starts within tens of milliseconds of the last one's end (bench/agents: the tester 15 ms after
 * the implementer, the documenter 70 ms after the verifier), and a spare begun at that end was
 * made beside the next agent's start. What ran between seats longer (the verifier's clean clone)
 * lets it go.
 */
export const QUIET_GAP_MS = 150;
/** Set while that gap runs: work put off waits for it, and an agent starting in it keeps it waiting. */
let gap: NodeJS.Timeout | undefined;

/** Lets the waiting work run, each on its own turn of the event loop: never inside the caller that released the last hold. */
function wakeAll(): void {
  const woken = [...waiting];
  waiting.clear();
  for (const wake of woken) setImmediate(wake);
}

/** Ends the gap after an agent's end: another agent started, a new gap begins, or the App stops. */
function endGap(): void {
  clearTimeout(gap);
  gap = undefined;
}

/** An agent's hold on work put off: released when it idles (at once) or ends (after {@link QUIET_GAP_MS}). */
export interface QuietHold {
  /** The agent waits on its model: work put off may run beside it now. */
  idle(): void;
  /** The agent ended: work put off runs unless another agent starts within the gap. */
  end(): void;
}

/**
 * Holds work put off ({@link afterStep}) back while an agent is busy: its start and its
 * handling of each answer are CPU-bound, and ending the last step's spare (a scan of /proc) or
 * making the next (~70 ms of a core) beside it slowed it (bench/agents, 2 cores: the
 * implementer's first turn, in which provisioning's spare was ended and the next made, took
 * 414 ms against the bare CLI's 289 ms). Released twice is released once; a hold goes by
 * itself after `maxMs`, as if its agent idled. `gapMs`: the gap after its end (tests).
 */
export function holdQuiet(maxMs: number, gapMs: number = QUIET_GAP_MS): QuietHold {
  const hold = Symbol("agent");
  holds.add(hold);
  endGap();
  const release = (ended: boolean): void => {
    clearTimeout(timer);
    if (!holds.delete(hold) || holds.size > 0) return;
    if (!ended) return wakeAll();
    endGap();
    gap = setTimeout(() => {
      gap = undefined;
      wakeAll();
    }, gapMs);
    // Like the longest hold: nothing put off keeps the App alive (whoever waits for it does, sparesMade).
    gap.unref();
  };
  const timer = setTimeout(() => release(false), maxMs);
  timer.unref();
  return { idle: () => release(false), end: () => release(true) };
}

/**
 * Runs `work` once the current step's result has been handed back, and no agent holds work
 * back ({@link holdQuiet}) nor ended within the gap: starting a process costs a fork of the
 * App (tens of milliseconds under load), which belongs between steps or beside an idle agent,
 * not beside a busy one.
 */
export function afterStep(work: () => void): void {
  const done = new Promise<void>((resolve) => {
    const run = (): void => {
      if (holds.size > 0 || gap !== undefined) {
        waiting.add(run);
        return;
      }
      try {
        work();
      } finally {
        resolve();
      }
    };
    setImmediate(run);
  });
  deferred.add(done);
  void done.finally(() => deferred.delete(done));
}

/** How many agents hold work put off back now. */
export function quietHolds(): number {
  return holds.size;
}

/** Lets work put off run now (a clean stop does not wait for busy agents, nor for the gap after one). */
export function endQuiet(): void {
  holds.clear();
  endGap();
  wakeAll();
}

/** The identity of a recipe: every input of the namespace the step would otherwise make. */
export function recipeKey(recipe: SpareRecipe): string {
  const { tools, hostPorts, rules } = recipe;
  return JSON.stringify([tools, [...hostPorts].sort((a, b) => a - b), rules.v4, rules.v6]);
}

/** The namespace `pid` is in, or undefined when there is no such process (or it is a zombie). */
function netNsOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return undefined;
  }
}

/** The spares made with the rules `key` names, oldest first. */
function sparesOf(key: string): Spare[] {
  return [...spares].filter((spare) => spare.key === key);
}

/** Ends a spare's processes and removes its folder. */
function drop(spare: Spare): void {
  spares.delete(spare);
  clearTimeout(spare.idle);
  spare.stop.abort();
  void spare.made.finally(() => rmSync(spare.dir, { recursive: true, force: true }));
}

/**
 * A spare made with `recipe`'s rules, now the caller's alone; undefined when there is none
 * (the step then makes its own namespace, as without spares). When none is ready, the first of
 * those still being made is waited for, up to {@link WAIT_MS}: begun when the step before
 * started, it is nearer ready than a namespace the step would begin now.
 */
export async function takeSpare(recipe: SpareRecipe): Promise<TakenSpare | undefined> {
  const key = recipeKey(recipe);
  const making = sparesOf(key);
  if (making.length > 0 && !making.some((spare) => spare.holder)) await waitFor(Promise.race(making.map((spare) => spare.made)), WAIT_MS);
  const spare = sparesOf(key).find((candidate) => candidate.holder);
  const holder = spare?.holder;
  if (!spare || !holder) return undefined;
  spares.delete(spare);
  clearTimeout(spare.idle);
  if (netNsOf(holder.pid) !== holder.netNs) {
    drop(spare);
    return undefined;
  }
  spareJoins += 1;
  return { pid: holder.pid, release: () => drop(spare) };
}

/** Reads the holder's `ready` line ("<pid> net:[<inode>]"), once whole. */
function readReady(dir: string): { pid: number; netNs: string } | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, "ready"), "utf8");
  } catch {
    return undefined;
  }
  const match = /^(\d{1,10}) (net:\[\d{1,20}\])\n$/.exec(text);
  return match ? { pid: Number(match[1]), netNs: match[2] as string } : undefined;
}

/**
 * Starts making spares for `recipe` in folders under `scratchRoot` (named with `prefix`, so a
 * killed App's leftovers are removed like a step's) until `count` of them exist or are being
 * made. A new kind of rules first drops the oldest kinds beyond {@link MAX_KINDS}.
 */
export function prepareSpare(recipe: SpareRecipe, scratchRoot: string, prefix: string, count = 1): void {
  const key = recipeKey(recipe);
  const have = sparesOf(key).length;
  if (have === 0) {
    const kinds = [...new Set([...spares].map((spare) => spare.key))];
    for (const old of kinds.slice(0, Math.max(0, kinds.length - MAX_KINDS + 1))) for (const spare of sparesOf(old)) drop(spare);
  }
  for (let made = have; made < count; made += 1) makeSpare(recipe, key, scratchRoot, prefix);
}

/** Begins one spare for `recipe`. */
function makeSpare(recipe: SpareRecipe, key: string, scratchRoot: string, prefix: string): void {
  const dir = mkdtempSync(join(scratchRoot, prefix));
  writeFileSync(join(dir, "net4"), recipe.rules.v4);
  writeFileSync(join(dir, "net6"), recipe.rules.v6);
  const stop = new AbortController();
  const spare: Spare = { key, dir, stop, made: Promise.resolve() };
  spares.add(spare);
  spare.made = new Promise<void>((resolve) => {
    const check = (): void => {
      const holder = readReady(dir);
      if (!holder || spare.holder) return;
      spare.holder = holder;
      spare.idle = setTimeout(() => drop(spare), IDLE_MS).unref();
      settle();
    };
    const watcher = watch(dir, check).unref();
    function settle(): void {
      watcher.close();
      resolve();
    }
    watcher.on("error", settle);
    // Outside any step's scope: the spare outlives the step that asked for it, and is no process of its story.
    void runInStepScope({}, () =>
      exec(spareNamespaceArgv(recipe.tools, dir, recipe.hostPorts), {
        cwd: dir,
        logPath: join(dir, "spare.log"),
        signal: stop.signal,
        background: true,
        onSpawn: (pid) => (spare.group = pid),
      }),
    )
      .catch(() => undefined)
      .then(() => {
        // Ended: dropped, or failed before it was ready (the next step then makes its own namespace and says why).
        spares.delete(spare);
        clearTimeout(spare.idle);
        settle();
      });
    check();
  });
}

/** Resolves once every spare being made is ready or has failed (for a bench, and tests). */
export async function sparesMade(): Promise<void> {
  // A spare's process and watcher do not keep the App alive; whoever waits for one does.
  const keepAlive = setInterval(() => undefined, 60_000);
  try {
    while (deferred.size > 0) await Promise.all([...deferred]);
    await Promise.all([...spares.values()].map((spare) => spare.made));
  } finally {
    clearInterval(keepAlive);
  }
}

/** The spares ready to be taken: each holder's pid, its namespace, and the process group of its helpers. */
export function readySpares(): { pid: number; netNs: string; group: number | undefined }[] {
  return [...spares.values()].flatMap((spare) => (spare.holder ? [{ ...spare.holder, group: spare.group }] : []));
}

/** Drops every spare, once the work put off by ended steps has run (a clean stop, and tests). */
export async function dropSpares(): Promise<void> {
  endQuiet();
  while (deferred.size > 0) await Promise.all([...deferred]);
  for (const spare of [...spares]) drop(spare);
}
