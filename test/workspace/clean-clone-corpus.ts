/**
 * The clean-clone corpus: small real repositories whose suite passes in the working tree, each
 * with the verdict the check must reach. A case that fails once committed and checked out
 * elsewhere must fail (or be refused); a control must pass. Every case also says what the user's
 * own commit records, which the corpus test compares with the check's tree.
 */
import { chmodSync, mkdirSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoWith, run, temp, write } from "./clean-clone-fixtures.js";

export type Verdict = "fails" | "refused" | "passes";

export interface CorpusCase {
  name: string;
  verdict: Verdict;
  /** A shell assertion that holds in the target's working tree. */
  assertion: string;
  /** Builds the target with its uncommitted change; returns its path. */
  build: () => Promise<string>;
  /** A pattern the refusal's reason must match (refused cases). */
  reason?: RegExp;
}

const CR = `"$(printf '\\r')"`;

export const CORPUS: readonly CorpusCase[] = [
  {
    name: "new CRLF file under * text=auto eol=lf",
    verdict: "fails",
    assertion: `grep -q ${CR} win.txt`,
    build: async () => {
      const repo = await repoWith({ ".gitattributes": "* text=auto eol=lf\n", "a.txt": "a\n" });
      write(repo, { "win.txt": "one\r\ntwo\r\n" });
      return repo;
    },
  },
  {
    name: "new CRLF file with core.autocrlf=true in the repository's config",
    verdict: "fails",
    assertion: `grep -q ${CR} win.txt`,
    build: async () => {
      const repo = await repoWith({ "a.txt": "a\n" });
      await run(repo, "config", "core.autocrlf", "true");
      write(repo, { "win.txt": "one\r\ntwo\r\n" });
      return repo;
    },
  },
  {
    name: "new CRLF file under * text with core.eol=crlf (the user's checkout only)",
    verdict: "fails",
    assertion: `grep -q ${CR} win.txt`,
    build: async () => {
      const repo = await repoWith({ ".gitattributes": "* text\n", "a.txt": "a\n" });
      await run(repo, "config", "core.eol", "crlf");
      write(repo, { "win.txt": "one\r\ntwo\r\n" });
      return repo;
    },
  },
  {
    name: "control: an edited symlink checked out as a plain file under core.symlinks=false",
    verdict: "passes",
    assertion: "grep -q b.txt link",
    build: async () => {
      const repo = await repoWith({ "a.txt": "a\n", "b.txt": "b.txt\n" });
      symlinkSync("a.txt", join(repo, "link"));
      await run(repo, "add", "link");
      await run(repo, "commit", "-q", "-m", "link");
      await run(repo, "config", "core.symlinks", "false");
      rmSync(join(repo, "link"));
      await run(repo, "checkout", "--", "link");
      writeFileSync(join(repo, "link"), "b.txt");
      return repo;
    },
  },
  {
    name: "new executable script with core.fileMode=false",
    verdict: "fails",
    assertion: "test -x run.sh",
    build: async () => {
      const repo = await repoWith({ "a.txt": "a\n" });
      await run(repo, "config", "core.fileMode", "false");
      write(repo, { "run.sh": { content: "#!/bin/sh\necho run\n", mode: 0o755 } });
      return repo;
    },
  },
  {
    name: "absolute symlink to a file outside the repository",
    verdict: "refused",
    assertion: "grep -q outside data.txt",
    reason: /symlink data\.txt points to "\/.*outside\.txt", an absolute path outside the repository/,
    build: async () => {
      const repo = await repoWith({ "a.txt": "a\n" });
      const outside = join(temp("cc-outside-"), "outside.txt");
      writeFileSync(outside, "outside\n");
      symlinkSync(outside, join(repo, "data.txt"));
      return repo;
    },
  },
  {
    name: "untracked git repository nested in the tree",
    verdict: "refused",
    assertion: "grep -q nested vendored/lib.txt",
    reason: /vendored is a nested git repository that is not a submodule/,
    build: async () => {
      const repo = await repoWith({ "a.txt": "a\n" });
      const nested = join(repo, "vendored");
      await run(repo, "init", "-q", nested);
      write(nested, { "lib.txt": "nested\n" });
      await run(nested, "add", "lib.txt");
      await run(nested, "commit", "-q", "-m", "nested");
      return repo;
    },
  },
  {
    name: "HEAD baseline (git show HEAD:<file>)",
    verdict: "fails",
    assertion: "git show HEAD:value.txt | grep -q old",
    build: async () => {
      const repo = await repoWith({ "value.txt": "old\n" });
      write(repo, { "value.txt": "new\n" });
      return repo;
    },
  },
  {
    name: "a same-size edit in the instant after git add (racy git)",
    verdict: "fails",
    assertion: "git show HEAD:value.txt | grep -q old",
    build: async () => {
      const repo = await repoWith({ "value.txt": "old\n" });
      // Same size, same second as the index: only a content comparison can see the change.
      const index = join(repo, ".git", "index");
      write(repo, { "value.txt": "new\n" });
      const { mtime } = statSync(index);
      utimesSync(join(repo, "value.txt"), mtime, mtime);
      return repo;
    },
  },
  {
    name: "git status lists the new test files",
    verdict: "fails",
    assertion: "git status --porcelain | grep -q new_test.sh",
    build: async () => {
      const repo = await repoWith({ "a.txt": "a\n" });
      write(repo, { "new_test.sh": "true\n" });
      return repo;
    },
  },
  {
    name: "a file .gitignore keeps out of the commit",
    verdict: "fails",
    assertion: "grep -q token settings.local",
    build: async () => {
      const repo = await repoWith({ ".gitignore": "*.local\n", "a.txt": "a\n" });
      write(repo, { "settings.local": "token\n" });
      return repo;
    },
  },
  {
    name: "a file core.excludesFile keeps out",
    verdict: "fails",
    assertion: "test -f notes.txt",
    build: async () => {
      const repo = await repoWith({ "a.txt": "a\n" });
      const excludes = join(temp("cc-excludes-"), "ignore");
      writeFileSync(excludes, "notes.txt\n");
      await run(repo, "config", "core.excludesFile", excludes);
      write(repo, { "notes.txt": "mine\n" });
      return repo;
    },
  },
  {
    name: "a file .git/info/exclude keeps out",
    verdict: "fails",
    assertion: "test -f scratch.txt",
    build: async () => {
      const repo = await repoWith({ "a.txt": "a\n" });
      write(repo, { ".git/info/exclude": "scratch.txt\n", "scratch.txt": "mine\n" });
      return repo;
    },
  },
  {
    name: "an edit to an --assume-unchanged file",
    verdict: "fails",
    assertion: "grep -q edited pinned.txt",
    build: async () => {
      const repo = await repoWith({ "pinned.txt": "original\n" });
      await run(repo, "update-index", "--assume-unchanged", "pinned.txt");
      write(repo, { "pinned.txt": "edited\n" });
      return repo;
    },
  },
  {
    name: "an edit to a --skip-worktree file",
    verdict: "fails",
    assertion: "grep -q edited skipped.txt",
    build: async () => {
      const repo = await repoWith({ "skipped.txt": "original\n" });
      await run(repo, "update-index", "--skip-worktree", "skipped.txt");
      write(repo, { "skipped.txt": "edited\n" });
      return repo;
    },
  },
  {
    name: "a clean filter the user configured",
    verdict: "fails",
    assertion: "grep -q lower shout.up",
    build: async () => {
      const repo = await repoWith({ ".gitattributes": "*.up filter=upper\n", "a.txt": "a\n" });
      await run(repo, "config", "filter.upper.clean", "tr a-z A-Z");
      write(repo, { "shout.up": "lower\n" });
      return repo;
    },
  },
  {
    name: "a changed submodule pointer",
    verdict: "refused",
    assertion: "true",
    reason: /moves the submodule pointer sub/,
    build: async () => {
      const upstream = await repoWith({ "lib.txt": "v1\n" });
      const repo = await repoWith({ "a.txt": "a\n" });
      await run(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", upstream, "sub");
      await run(repo, "commit", "-q", "-m", "submodule");
      write(join(repo, "sub"), { "lib.txt": "v2\n" });
      await run(join(repo, "sub"), "commit", "-q", "-am", "v2");
      return repo;
    },
  },
  {
    name: "an edge-case tree: renames, deletions, type changes, intent-to-add, awkward names",
    verdict: "passes",
    assertion: 'test -L was-file && test -f was-link && test -f "dir now/inside.txt" && test -f intent.txt && ! test -e gone.txt',
    build: async () => {
      const repo = await repoWith({ "gone.txt": "gone\n", "was-file": "a file\n", "target.txt": "t\n", "dir now": "a file\n", "old name.txt": "o\n" });
      symlinkSync("target.txt", join(repo, "was-link"));
      await run(repo, "add", "was-link");
      await run(repo, "commit", "-q", "-m", "link");
      rmSync(join(repo, "gone.txt"));
      rmSync(join(repo, "was-file"));
      symlinkSync("target.txt", join(repo, "was-file"));
      rmSync(join(repo, "was-link"));
      write(repo, { "was-link": "now a file\n", "intent.txt": "intent\n", "tab\there.txt": "t\n", "ünï/cödé.txt": "u\n" });
      rmSync(join(repo, "dir now"));
      write(repo, { "dir now/inside.txt": "inside\n" });
      renameSync(join(repo, "old name.txt"), join(repo, "new name.txt"));
      await run(repo, "add", "-N", "intent.txt");
      return repo;
    },
  },
  {
    name: "control: CRLF with no attributes",
    verdict: "passes",
    assertion: `grep -q ${CR} win.txt`,
    build: async () => {
      const repo = await repoWith({ "a.txt": "a\n" });
      write(repo, { "win.txt": "one\r\ntwo\r\n" });
      return repo;
    },
  },
  {
    name: "control: a force-added ignored file, edited",
    verdict: "passes",
    assertion: "grep -q edited conf.ini",
    build: async () => {
      const repo = await repoWith({ ".gitignore": "*.ini\n", "a.txt": "a\n" });
      write(repo, { "conf.ini": "original\n" });
      await run(repo, "add", "-f", "conf.ini");
      await run(repo, "commit", "-q", "-m", "forced");
      write(repo, { "conf.ini": "edited\n" });
      return repo;
    },
  },
  {
    name: "control: chmod +x on a tracked script",
    verdict: "passes",
    assertion: "test -x tool.sh",
    build: async () => {
      const repo = await repoWith({ "tool.sh": { content: "#!/bin/sh\n", mode: 0o644 } });
      chmodSync(join(repo, "tool.sh"), 0o755);
      return repo;
    },
  },
  {
    name: "control: case-only rename with git mv",
    verdict: "passes",
    assertion: "test -f README.md && ! test -e Readme.md",
    build: async () => {
      const repo = await repoWith({ "Readme.md": "r\n" });
      await run(repo, "mv", "Readme.md", "README.md");
      return repo;
    },
  },
  {
    name: "control: case-only rename with plain mv",
    verdict: "passes",
    assertion: "test -f README.md && ! test -e Readme.md",
    build: async () => {
      const repo = await repoWith({ "Readme.md": "r\n" });
      renameSync(join(repo, "Readme.md"), join(repo, "README.md"));
      return repo;
    },
  },
  {
    name: "control: symlink inside the repository",
    verdict: "passes",
    assertion: "grep -q inside link.txt && test -L link.txt",
    build: async () => {
      const repo = await repoWith({ "docs/a.txt": "inside\n" });
      symlinkSync("docs/a.txt", join(repo, "link.txt"));
      return repo;
    },
  },
  {
    name: "control: a new directory of untracked files",
    verdict: "passes",
    assertion: "test $(ls fresh | wc -l) -eq 5",
    build: async () => {
      const repo = await repoWith({ "a.txt": "a\n" });
      for (let index = 0; index < 5; index += 1) write(repo, { [`fresh/f${index}.txt`]: `${index}\n` });
      return repo;
    },
  },
  {
    name: "control: a nested .gitignore negation",
    verdict: "passes",
    assertion: "grep -q keep logs/keep.log",
    build: async () => {
      const repo = await repoWith({ "logs/.gitignore": "*\n!.gitignore\n!keep.log\n" });
      write(repo, { "logs/keep.log": "keep\n", "logs/drop.log": "drop\n" });
      return repo;
    },
  },
  {
    name: "control: a 60 MB untracked file",
    verdict: "passes",
    assertion: "test $(wc -c < big.bin) -eq 62914560",
    build: async () => {
      const repo = await repoWith({ "a.txt": "a\n" });
      const big = Buffer.alloc(60 * 1024 * 1024);
      for (let offset = 0; offset < big.length; offset += 4096) big.writeUInt32LE(offset, offset);
      writeFileSync(join(repo, "big.bin"), big);
      return repo;
    },
  },
  {
    name: "control: a binary edit",
    verdict: "passes",
    assertion: "test $(od -An -tx1 -j3 -N1 blob.bin | tr -d ' ') = ff",
    build: async () => {
      const repo = await repoWith({ "blob.bin": { content: Buffer.from([0, 1, 2, 3, 0, 13, 10]) } });
      writeFileSync(join(repo, "blob.bin"), Buffer.from([0, 1, 2, 255, 0, 13, 10, 0]));
      return repo;
    },
  },
  {
    name: "control: 3,000 untracked files",
    verdict: "passes",
    assertion: "test $(ls many | wc -l) -eq 3000",
    build: async () => {
      const repo = await repoWith({ "a.txt": "a\n" });
      mkdirSync(join(repo, "many"));
      for (let index = 0; index < 3000; index += 1) writeFileSync(join(repo, "many", `f${index}.txt`), `${index}\n`);
      return repo;
    },
  },
];
