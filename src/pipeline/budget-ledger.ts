/**
 * What a story's agents spent across all its runs, kept apart from its run folders (which
 * retention prunes) in `HARNESS_HOME/budgets/<story>.json` (schema `budget-spent`): a retry after a block
 * and every revision round start a new run, and the story's budget must count them all, or
 * `/harness retry-blocked` would be a way around `max_tokens`.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomicSync } from "../files/index.js";
import { schemas } from "../schema/index.js";
import { storyDirName } from "../workspace/index.js";

/** The record: runs so far (this one included), agent launches, tokens and agent milliseconds. */
export interface BudgetSpent {
  version: 1;
  storyId: string;
  runs: number;
  launches: number;
  tokens: number;
  agentMs: number;
  at: string;
}

/** Where the story's record lives. */
export function budgetSpentPath(harnessHome: string, storyId: string): string {
  return join(harnessHome, "budgets", `${storyDirName(storyId)}.json`);
}

/**
 * What earlier runs of the story spent: none for a story's first run, the record when it is
 * valid and about this story, or the problem with it (a budget must not be reset by a file
 * that cannot be read: the caller decides what that means).
 */
export function readBudgetSpent(harnessHome: string, storyId: string): { spent?: BudgetSpent; problem?: string } {
  const file = budgetSpentPath(harnessHome, storyId);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    return { problem: `${file} cannot be read (${(error as Error).message})` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: `${file} is not JSON` };
  }
  const issues = schemas().issues("budget-spent", value);
  if (issues.length > 0) return { problem: `${file} is invalid: ${issues.map((issue) => `${issue.path} ${issue.message}`).join("; ")}` };
  const spent = value as BudgetSpent;
  if (spent.storyId !== storyId) return { problem: `${file} is about story '${spent.storyId}', not '${storyId}'` };
  return { spent };
}

/** Keeps the story's record (schema-checked, atomic rename, synchronous so launches of parallel tasks never interleave). */
export function writeBudgetSpent(harnessHome: string, spent: Omit<BudgetSpent, "version" | "at">, now: Date): void {
  const file = budgetSpentPath(harnessHome, spent.storyId);
  const record: BudgetSpent = { version: 1, ...spent, at: now.toISOString() };
  schemas().validate("budget-spent", record, file);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileAtomicSync(file, `${JSON.stringify(record)}\n`);
}
