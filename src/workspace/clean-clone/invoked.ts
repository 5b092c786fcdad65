/**
 * What a suite command actually invokes, where it can be known without running it: the program
 * its first word names (a path in the clone, or a name on the suite's PATH), or, for a script,
 * the interpreter its `#!` line names. Only a known interpreter (Python, Node, Ruby, …) counts,
 * so the check never runs an arbitrary repository program just to ask its version.
 */
import { realpath } from "node:fs/promises";
import { basename, delimiter, isAbsolute, join, resolve } from "node:path";
import { readBoundedFile } from "../../files/index.js";
import { isExecutableFile } from "./interpreter.js";

const INTERPRETER_NAME = /^(python|pypy|node|nodejs|ruby|perl|php|bun|deno)[0-9.]*$/;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=\S*$/;
const PLAIN_WORD = /^[A-Za-z0-9_./+@%:,-]+$/;

/** The program word of the command's first simple command, when it is a plain word. */
export function programWord(command: string): string | undefined {
  const words = command.trim().split(/\s+/);
  let index = 0;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: past the last word the test sees "", which is no assignment, so the bound is a second stop
  while (index < words.length && ASSIGNMENT.test(words[index] ?? "")) index += 1;
  if (words[index] === "exec") index += 1;
  const word = words[index];
  // Stryker disable next-line ConditionalExpression: without the check an undefined word is still what comes back
  return word !== undefined && PLAIN_WORD.test(word) ? word : undefined;
}

async function lookUp(word: string, cwd: string, searchPath: string): Promise<string | undefined> {
  if (word.includes("/")) {
    const path = resolve(cwd, word);
    return (await isExecutableFile(path)) ? path : undefined;
  }
  for (const dir of searchPath.split(delimiter).filter((entry) => isAbsolute(entry))) {
    const candidate = join(dir, word);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** The interpreter a script's `#!` line names (`#!/usr/bin/env python3` looked up on `searchPath`). */
async function shebangOf(path: string, cwd: string, searchPath: string): Promise<string | undefined> {
  // The program is often a link (`node_modules/.bin/jest`), resolved here; the read itself follows none, never waits on a
  // FIFO an agent planted in a linked folder, and takes the first 256 bytes only.
  const head = await readBoundedFile(await realpath(path), { maxBytes: 256, head: true });
  const line = head.toString("utf8").split("\n")[0] ?? "";
  if (!line.startsWith("#!")) return undefined;
  const [program = "", first] = line.slice(2).trim().split(/\s+/);
  // `env -S …` and other options are not followed: the line is then not understood. A first word
  // that is missing or ends in "-" names no interpreter whichever way it is read (the caller
  // catches the TypeError of a missing one and matches INTERPRETER_NAME on what is found).
  // Stryker disable next-line ConditionalExpression,MethodExpression: see above
  if (basename(program) === "env" && first !== undefined && !first.startsWith("-")) return lookUp(first, cwd, searchPath);
  return isAbsolute(program) ? program : undefined;
}

export interface Invoked {
  /** The program as found (a link is kept as it is: a virtualenv's `bin/python` stays in its `bin`). */
  path: string;
  /** True when the command names it by path rather than by a name looked up on PATH. */
  byPath: boolean;
}

/**
 * The interpreter `command` invokes when run from `cwd` with `searchPath`, or undefined when it
 * cannot be known (a shell construct, a program that is not an interpreter, a binary).
 */
export async function invokedInterpreter(command: string, cwd: string, searchPath: string): Promise<Invoked | undefined> {
  const word = programWord(command);
  if (word === undefined) return undefined;
  const program = await lookUp(word, cwd, searchPath);
  if (program === undefined) return undefined;
  if (INTERPRETER_NAME.test(basename(program))) return { path: program, byPath: word.includes("/") };
  const viaShebang = await shebangOf(program, cwd, searchPath).catch(() => undefined);
  if (viaShebang !== undefined && INTERPRETER_NAME.test(basename(viaShebang))) return { path: viaShebang, byPath: true };
  return undefined;
}

/** True when two paths name the same file once links are resolved. */
export async function sameFile(a: string, b: string): Promise<boolean> {
  const [left, right] = await Promise.all([realpath(a).catch(() => a), realpath(b).catch(() => b)]);
  return left === right;
}
