/**
 * The check's commit object, written by the harness itself instead of by a `git commit-tree`
 * process: on a small change the commit is a few hundred bytes, and starting one more git
 * process on the critical path cost more than everything else the step does.
 *
 * A loose object is `<type> <size>\0<body>`, named by its hash (SHA-1, or SHA-256 in a
 * repository made with `--object-format=sha256`; the tree id git just printed says which) and
 * stored zlib-compressed at `objects/<first two hex digits>/<the rest>`. The body is what
 * `commit-tree -m` writes: tree, parent, author and committer with a Unix time and zone, a
 * blank line and the message ending in a newline. It is written only into the scratch clone's
 * own object folder, never the target's.
 */
import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { deflateSync } from "node:zlib";

/** Who made a commit: `Name <email>`. */
export interface Signature {
  name: string;
  email: string;
}

export interface CommitFields {
  tree: string;
  parent: string;
  author: Signature;
  committer: Signature;
  /** Seconds since the Unix epoch; the zone is always UTC (`+0000`). */
  time: number;
  message: string;
}

/** The hash that names objects of a repository whose ids look like `id`. */
export function objectHash(id: string): "sha1" | "sha256" {
  if (/^[0-9a-f]{40}$/.test(id)) return "sha1";
  if (/^[0-9a-f]{64}$/.test(id)) return "sha256";
  throw new Error(`not a full object id: ${JSON.stringify(id)}`);
}

/** The commit's body, as `git commit-tree -m` writes it. */
export function commitBody(fields: CommitFields): string {
  const line = (role: string, who: Signature): string => `${role} ${who.name} <${who.email}> ${fields.time} +0000\n`;
  const message = fields.message.endsWith("\n") ? fields.message : `${fields.message}\n`;
  return `tree ${fields.tree}\nparent ${fields.parent}\n${line("author", fields.author)}${line("committer", fields.committer)}\n${message}`;
}

/** The object's bytes before compression and its id: the hash of `commit <size>\0<body>`. */
export function commitObject(fields: CommitFields): { id: string; bytes: Buffer } {
  const body = Buffer.from(commitBody(fields));
  const bytes = Buffer.concat([Buffer.from(`commit ${body.length}\0`), body]);
  return { id: createHash(objectHash(fields.tree)).update(bytes).digest("hex"), bytes };
}

/** Writes the commit as a loose object into `objectsDir` and returns its id. */
export async function writeCommitObject(objectsDir: string, fields: CommitFields): Promise<string> {
  const { id, bytes } = commitObject(fields);
  const folder = join(objectsDir, id.slice(0, 2));
  await mkdir(folder, { recursive: true });
  try {
    // Read-only, as git leaves its objects. One already there has these very bytes (its name is their hash).
    await writeFile(join(folder, id.slice(2)), deflateSync(bytes), { flag: "wx", mode: 0o444 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return id;
}
