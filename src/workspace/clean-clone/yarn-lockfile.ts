/**
 * The parts of a `yarn.lock` the install comparison needs: which version each descriptor
 * (`name@range`) resolves to. Classic yarn (v1) writes a format of its own, not YAML:
 *
 *     "@s/a@^1.0.0", "@s/a@^1.1.0":
 *       version "1.2.0"
 *
 * yarn berry (2 and later) writes YAML with a `__metadata` entry, and spells the registry
 * protocol out (`"a@npm:^1.0.0":` / `version: 1.2.0`). Either way one entry may answer several
 * descriptors, separated by commas in its key.
 */
import { parse as parseYaml } from "yaml";
import { isMapping, nameOf, YAML_MAX_BYTES } from "./install-record.js";

/** A yarn lockfile, read. */
export interface YarnLock {
  /** Whether yarn berry wrote it (else classic yarn). */
  berry: boolean;
  /** The version each descriptor resolves to. */
  resolved: Map<string, string>;
  /** Every version of each package name the lockfile holds. */
  versions: Map<string, Set<string>>;
}

/** `"a@^1", a@^2` → `a@^1`, `a@^2`; undefined when a quoted one is not a JSON string. */
function descriptors(key: string): string[] | undefined {
  const found: string[] = [];
  for (const part of key.split(/,\s*/)) {
    if (!part.startsWith('"')) {
      found.push(part.trim());
      continue;
    }
    try {
      const value: unknown = JSON.parse(part);
      if (typeof value !== "string") return undefined;
      found.push(value);
    } catch {
      return undefined;
    }
  }
  return found;
}

function record(lock: YarnLock, descriptor: string, version: string): void {
  lock.resolved.set(descriptor, version);
  const name = nameOf(descriptor);
  lock.versions.set(name, (lock.versions.get(name) ?? new Set()).add(version));
}

/** Classic yarn's format: an unindented key line per entry, then `  version "x"` among its fields. */
function readClassic(text: string, file: string): YarnLock | { why: string } {
  const lock: YarnLock = { berry: false, resolved: new Map(), versions: new Map() };
  let current: string[] = [];
  let number = 0;
  for (const line of text.split(/\r?\n/)) {
    number += 1;
    if (line.trim() === "" || line.startsWith("#")) continue;
    if (!line.startsWith(" ")) {
      const keys = line.endsWith(":") ? descriptors(line.slice(0, -1)) : undefined;
      if (keys === undefined) return { why: `${file} line ${number} is not an entry of a yarn lockfile` };
      current = keys;
      continue;
    }
    const version = /^ {2}version:? +"?([^"\s]+)"?\s*$/.exec(line)?.[1];
    if (version !== undefined) for (const descriptor of current) record(lock, descriptor, version);
  }
  return lock;
}

/** yarn berry's format: YAML, one mapping per entry with a `version`. */
function readBerry(text: string, file: string): YarnLock | { why: string } {
  if (text.length > YAML_MAX_BYTES) return { why: `${file} is larger than ${YAML_MAX_BYTES} bytes of YAML` };
  let document: unknown;
  try {
    document = parseYaml(text, { uniqueKeys: false });
  } catch {
    return { why: `${file} is not valid YAML` };
  }
  if (!isMapping(document)) return { why: `${file} does not hold a mapping` };
  const lock: YarnLock = { berry: true, resolved: new Map(), versions: new Map() };
  for (const [key, entry] of Object.entries(document)) {
    if (key === "__metadata") continue;
    const keys = descriptors(key);
    if (keys === undefined || !isMapping(entry)) return { why: `${file} has an entry that is not one of a yarn lockfile (${key.slice(0, 80)})` };
    const version = entry.version;
    if (typeof version === "string" || typeof version === "number") for (const descriptor of keys) record(lock, descriptor, String(version));
  }
  return lock;
}

/** Reads a `yarn.lock` (`file` names it in the why), or says why it cannot be compared. */
export function readYarnLock(text: string, file: string): YarnLock | { why: string } {
  if (/^__metadata:/m.test(text)) return readBerry(text, file);
  if (/^# yarn lockfile v1\s*$/m.test(text)) return readClassic(text, file);
  return { why: `${file} is neither classic yarn's lockfile (# yarn lockfile v1) nor yarn berry's (__metadata)` };
}

/** Whether a range names its protocol (`npm:`, `workspace:`, `patch:`, `file:`): berry adds `npm:` to one that does not. */
const PROTOCOL = /^[a-z][a-z+-]*:/;

/** The version `yarn.lock` resolves `name@range` to, or undefined when it holds no such descriptor. */
export function lockedVersion(lock: YarnLock, name: string, range: string): string | undefined {
  const exact = lock.resolved.get(`${name}@${range}`);
  if (exact !== undefined || !lock.berry || PROTOCOL.test(range)) return exact;
  return lock.resolved.get(`${name}@npm:${range}`);
}
