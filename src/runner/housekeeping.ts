/**
 * Keeping the data directory from filling the disk: run directories older than the retention
 * period are removed, and a story does not start when the disk is nearly full (it is reported
 * blocked as `environment`, so the queue goes on instead of wedging on a full disk).
 */
import { readdirSync, rmSync, statfsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { FailureClass } from "../pipeline/index.js";
import { renderLowDisk } from "../github/report/index.js";

export const DEFAULT_RETENTION_DAYS = 14;
export const DEFAULT_MIN_FREE_MB = 1024;

/** A housekeeping setting that cannot be used; names the variable. */
export class HousekeepingSettingsError extends Error {
  readonly failureClass = "environment" satisfies FailureClass;
  constructor(
    readonly variable: string,
    value: string,
  ) {
    super(`${variable}=${JSON.stringify(value)} must be a positive integer`);
    this.name = "HousekeepingSettingsError";
  }
}

export interface HousekeepingSettings {
  /** `HARNESS_RETENTION_DAYS`: run directories older than this are removed. */
  retentionDays: number;
  /** `HARNESS_MIN_FREE_MB`: a story starts only with at least this much free in `HARNESS_HOME`. */
  minFreeBytes: number;
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new HousekeepingSettingsError(name, raw);
  return value;
}

/** Reads `HARNESS_RETENTION_DAYS` (default 14) and `HARNESS_MIN_FREE_MB` (default 1024). */
export function housekeepingFromEnv(env: NodeJS.ProcessEnv = process.env): HousekeepingSettings {
  return {
    retentionDays: positive(env, "HARNESS_RETENTION_DAYS", DEFAULT_RETENTION_DAYS),
    minFreeBytes: positive(env, "HARNESS_MIN_FREE_MB", DEFAULT_MIN_FREE_MB) * 1024 * 1024,
  };
}

/**
 * Removes `<harnessHome>/runs/<story>/<run>` folders last changed more than `days` ago, and
 * story folders left empty. Returns the removed run folders. A run still being written is
 * changed constantly, so it is never old.
 */
export function pruneRuns(harnessHome: string, days: number, now: Date = new Date()): string[] {
  const runs = join(harnessHome, "runs");
  const cutoff = now.getTime() - days * 24 * 60 * 60_000;
  const removed: string[] = [];
  for (const story of list(runs)) {
    const storyDir = join(runs, story);
    for (const run of list(storyDir)) {
      const runDir = join(storyDir, run);
      if (lastChange(runDir) < cutoff) {
        rmSync(runDir, { recursive: true, force: true });
        removed.push(runDir);
      }
    }
    if (list(storyDir).length === 0) rmSync(storyDir, { recursive: true, force: true });
  }
  return removed;
}

/** Free bytes for an unprivileged writer on the file system holding `path`. */
export function freeBytes(path: string): number {
  const stats = statfsSync(path);
  return Number(stats.bavail) * Number(stats.bsize);
}

/** Why a story was not started on a nearly full disk; undefined when there is room. */
export function lowDiskReason(harnessHome: string, minFreeBytes: number): string | undefined {
  const free = freeBytes(existingAncestor(harnessHome));
  if (free >= minFreeBytes) return undefined;
  return renderLowDisk(free, minFreeBytes);
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The newest modification time of `dir` and what is directly in it and in its journal. */
function lastChange(dir: string): number {
  let newest = statSync(dir).mtimeMs;
  for (const name of list(dir)) {
    try {
      newest = Math.max(newest, statSync(join(dir, name)).mtimeMs);
    } catch {
      // Removed while we looked.
    }
  }
  return newest;
}

function existingAncestor(path: string): string {
  let current = path;
  for (;;) {
    try {
      statSync(current);
      return current;
    } catch {
      const parent = join(current, "..");
      if (parent === current) return current;
      current = parent;
    }
  }
}
