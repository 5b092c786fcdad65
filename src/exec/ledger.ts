/**
 * A record of the processes a harness process started and that are still running: one small
 * file per child (`<pid>.json`: the child's pid and start time, and its owner's), written when
 * the child starts and removed when its group is gone. After kill -9 the files stay; the next
 * start finds children whose owner is dead but who still run (orphans of the old run beside
 * the resumed story) and ends their process groups.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { identityOf, isRunning, selfIdentity, type ProcessIdentity } from "./identity.js";

interface LedgerRecord {
  child: ProcessIdentity;
  owner: ProcessIdentity;
  /** The program, for the log line of a reaped orphan. */
  program: string;
}

export class ProcessLedger {
  private readonly owner = selfIdentity();
  private folderMade = false;

  constructor(readonly dir: string) {}

  /** Records a child that just started (synchronously: it must be on disk before anything else can kill us). */
  started(pid: number, program: string): void {
    const child = identityOf(pid);
    if (!child) return;
    const record: LedgerRecord = { child, owner: this.owner, program };
    try {
      // The folder is made once, and again only when it went (a write into it then fails with ENOENT).
      if (!this.folderMade) mkdirSync(this.dir, { recursive: true });
      this.folderMade = true;
      try {
        writeFileSync(join(this.dir, `${pid}.json`), JSON.stringify(record));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        mkdirSync(this.dir, { recursive: true });
        writeFileSync(join(this.dir, `${pid}.json`), JSON.stringify(record));
      }
    } catch {
      // A full disk must not stop the step; the process is still ended with its group.
    }
  }

  /** Forgets a child whose group is gone. */
  ended(pid: number): void {
    rmSync(join(this.dir, `${pid}.json`), { force: true });
  }
}

/** One orphan found and ended. */
export interface ReapedProcess {
  pid: number;
  program: string;
}

/**
 * Ends the process groups of recorded children whose owner is dead and which still run (the
 * same process: pid and start time), then removes their records. Records of live owners (the
 * current process) are left alone.
 */
export function reapOrphans(dir: string): ReapedProcess[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith(".json"));
  } catch {
    return [];
  }
  const reaped: ReapedProcess[] = [];
  for (const name of names) {
    const path = join(dir, name);
    let record: LedgerRecord | undefined;
    try {
      record = JSON.parse(readFileSync(path, "utf8")) as LedgerRecord;
    } catch {
      // Not JSON (torn, or not a record): record stays undefined and the file goes below.
    }
    const valid =
      record &&
      Number.isInteger(record.child?.pid) &&
      typeof record.child.startTime === "string" &&
      Number.isInteger(record.owner?.pid) &&
      // Stryker disable next-line EqualityOperator,ConditionalExpression: a pid of 1 would make the kill below signal every process (-1); no test may run that mutant on a shared host.
      record.child.pid > 1;
    if (valid && record && isRunning(record.owner)) continue;
    if (valid && record && isRunning(record.child)) {
      try {
        // The child leads its own group (exec starts it detached): the group goes with it.
        process.kill(-record.child.pid, "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
      reaped.push({ pid: record.child.pid, program: String(record.program) });
    }
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: the file was just read; force only covers another reaper removing it first.
    rmSync(path, { force: true });
  }
  return reaped;
}
