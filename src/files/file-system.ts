/**
 * The file-system calls atomic writes make, as one small interface. Production uses node's own
 * functions (no wrapper, no allocation per call); a test swaps in a recording wrapper around
 * them to see the order that makes a write durable (write, fsync, rename, fsync of the folder).
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";

/** The part of a `FileHandle` atomic writes use. */
export interface AtomicFileHandle {
  writeFile(data: string): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export interface AtomicFileSystem {
  openSync(path: string, flags: string, mode?: number): number;
  writeSync(fd: number, data: string): number;
  fsyncSync(fd: number): void;
  closeSync(fd: number): void;
  renameSync(from: string, to: string): void;
  rmSync(path: string, options: { force: boolean }): void;
  open(path: string, flags: string, mode?: number): Promise<AtomicFileHandle>;
  rename(from: string, to: string): Promise<void>;
  rm(path: string, options: { force: boolean }): Promise<void>;
}

/** Node's own functions, unwrapped. */
export const nodeFileSystem: AtomicFileSystem = { openSync, writeSync, fsyncSync, closeSync, renameSync, rmSync, open, rename, rm };
