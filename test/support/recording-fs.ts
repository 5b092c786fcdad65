/**
 * A recording wrapper around the real file system for src/files' seam: every call goes to node's
 * own function, and each one that finished is listed, in the order it finished, as
 * `<call> <name>[ <name or flags>]` with names relative to one folder (`.` for the folder itself,
 * `<name>.tmp` for a write's temp file `<name>.<pid>.<random>.tmp`). A failed call is listed
 * with its error code after `!`. Hooks run before the real call (a hook that throws fails the
 * call; an async call waits for its hook), so a test can fail a step, or hold it.
 */
import { relative } from "node:path";
import { nodeFileSystem, type AtomicFileHandle, type AtomicFileSystem } from "../../src/files/file-system.js";

export type FsCall = "open" | "write" | "fsync" | "close" | "rename" | "rm";
export type FsHooks = Partial<Record<FsCall, (name: string) => void | Promise<void>>>;

export interface RecordingFileSystem {
  fs: AtomicFileSystem;
  /** The calls that finished, in order, and any marks the test added. */
  events: string[];
  /** Adds a line of the test's own (say, "returned") to `events`. */
  mark(label: string): void;
}

export function recordingFileSystem(base: string, hooks: FsHooks = {}): RecordingFileSystem {
  const events: string[] = [];
  const real = nodeFileSystem;
  const nameOf = (path: string): string => relative(base, path).replace(/\.\d+\.[0-9a-f]{8}\.tmp$/, ".tmp") || ".";
  const names = new Map<number, string>();
  const failed = (line: string, error: unknown): never => {
    events.push(`${line} !${(error as NodeJS.ErrnoException).code ?? "error"}`);
    throw error;
  };
  function sync<T>(call: FsCall, name: string, line: string, run: () => T): T {
    try {
      void hooks[call]?.(name);
      const result = run();
      events.push(line);
      return result;
    } catch (error) {
      return failed(line, error);
    }
  }
  async function later<T>(call: FsCall, name: string, line: string, run: () => Promise<T>): Promise<T> {
    try {
      await hooks[call]?.(name);
      const result = await run();
      events.push(line);
      return result;
    } catch (error) {
      return failed(line, error);
    }
  }
  const wrap = (handle: AtomicFileHandle, name: string): AtomicFileHandle => ({
    writeFile: (data) => later("write", name, `write ${name}`, () => handle.writeFile(data)),
    sync: () => later("fsync", name, `fsync ${name}`, () => handle.sync()),
    close: () => later("close", name, `close ${name}`, () => handle.close()),
  });
  const fs: AtomicFileSystem = {
    openSync(path, flags, mode) {
      const fd = sync("open", nameOf(path), `open ${nameOf(path)} ${flags}`, () => real.openSync(path, flags, mode));
      names.set(fd, nameOf(path));
      return fd;
    },
    writeSync: (fd, data) => sync("write", names.get(fd) ?? "?", `write ${names.get(fd) ?? "?"}`, () => real.writeSync(fd, data)),
    fsyncSync: (fd) => sync("fsync", names.get(fd) ?? "?", `fsync ${names.get(fd) ?? "?"}`, () => real.fsyncSync(fd)),
    closeSync: (fd) => sync("close", names.get(fd) ?? "?", `close ${names.get(fd) ?? "?"}`, () => real.closeSync(fd)),
    renameSync: (from, to) => sync("rename", nameOf(from), `rename ${nameOf(from)} ${nameOf(to)}`, () => real.renameSync(from, to)),
    rmSync: (path, options) => sync("rm", nameOf(path), `rm ${nameOf(path)}`, () => real.rmSync(path, options)),
    open: async (path, flags, mode) =>
      wrap(await later("open", nameOf(path), `open ${nameOf(path)} ${flags}`, () => real.open(path, flags, mode)), nameOf(path)),
    rename: (from, to) => later("rename", nameOf(from), `rename ${nameOf(from)} ${nameOf(to)}`, () => real.rename(from, to)),
    rm: (path, options) => later("rm", nameOf(path), `rm ${nameOf(path)}`, () => real.rm(path, options)),
  };
  return { fs, events, mark: (label) => events.push(label) };
}

/** A step a test holds: `reached` resolves when the step starts, and the step goes on after `release()`. */
export interface Gate {
  hook: () => Promise<void>;
  reached: Promise<void>;
  release: () => void;
}

export function gate(): Gate {
  let arrived: () => void = () => undefined;
  let open: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const released = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    hook: () => {
      arrived();
      return released;
    },
    reached,
    release: () => open(),
  };
}
