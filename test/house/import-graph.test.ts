/**
 * The house's shape, checked over the real import graph of `src/` (type imports included, as
 * TypeScript's own pre-processor reads them): no import cycle anywhere, and the failure
 * vocabulary is ground that stands on no other room, and no file is dead (unreached from the entry).
 */
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** Every `.ts` file of `src/`, with the `src/` files it imports or re-exports from. */
function importGraph(root: string): Map<string, string[]> {
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((path) => path.endsWith(".ts")).map((path) => join(root, path));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = importedFiles
      .map((entry) => entry.fileName)
      .filter((name) => name.startsWith("."))
      .map((name) => resolve(dirname(file), name.replace(/\.js$/, ".ts")))
      .map((target) => (existsSync(target) ? target : join(target.replace(/\.ts$/, ""), "index.ts")))
      .filter((target) => existsSync(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The graph's strongly connected components of more than one file (or a file importing itself): its cycles. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.map((file) => relative(SRC, file)).sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe("the import graph of src/", () => {
  const graph = importGraph(SRC);

  it("reads the real tree (imports, type imports and re-exports)", () => {
    expect(graph.size).toBeGreaterThan(200);
    const events = graph.get(join(SRC, "pipeline", "events.ts")) ?? [];
    expect(events).toContain(join(SRC, "failure", "index.ts"));
  });

  it("has no import cycle, type imports included", () => {
    expect(cycles(graph)).toEqual([]);
  });

  it("finds a cycle when there is one (the check itself works)", () => {
    const a = join(SRC, "a.ts");
    const b = join(SRC, "b.ts");
    const c = join(SRC, "c.ts");
    expect(
      cycles(
        new Map([
          [a, [b]],
          [b, [c]],
          [c, [a]],
        ]),
      ),
    ).toEqual([["a.ts", "b.ts", "c.ts"]]);
    expect(
      cycles(
        new Map([
          [a, [b]],
          [b, []],
        ]),
      ),
    ).toEqual([]);
  });

  it("keeps the ground floor below the rooms that use it: no lower room imports the pipeline, the runner, GitHub or the CLI", () => {
    const lower = ["exec", "sandbox", "workspace", "schema", "queue", "files", "text", "failure", "story-key"];
    const upper = ["pipeline", "runner", "github", "outbox", "cli", "app.ts", "cli.ts"];
    const roomOf = (file: string): string => relative(SRC, file).split("/")[0] ?? "";
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      if (!lower.includes(roomOf(file))) continue;
      for (const target of targets) if (upper.includes(roomOf(target))) upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
    }
    expect(upward).toEqual([]);
  });

  it("keeps the GitHub rooms and the outbox in their order: ground, the language and renderers, the outbox, reporting, admission, the story adapter, the door", () => {
    // Each room with the rooms it may stand on (besides the rooms outside GitHub and the outbox).
    const allowed: Record<string, string[]> = {
      github: [],
      "github/commands": [],
      "github/report/render": ["github", "github/commands"],
      outbox: ["github", "github/report/render"],
      "github/report": ["github", "github/report/render", "outbox"],
      "github/triggers": ["github", "github/commands", "github/report", "github/report/render"],
      "github/story": ["github", "github/report", "github/report/render", "github/triggers", "outbox"],
      "github/door": ["github", "github/story"],
    };
    const rooms = Object.keys(allowed).sort((a, b) => b.length - a.length);
    const roomOf = (file: string): string | undefined => {
      const path = relative(SRC, file);
      return rooms.find((room) => path.startsWith(room + "/"));
    };
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      const from = roomOf(file);
      if (from === undefined) continue;
      for (const target of targets) {
        const to = roomOf(target);
        if (to === undefined || to === from) continue;
        if (!allowed[from]!.includes(to)) wrong.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
        // A room is entered through its door.
        else if (target !== join(SRC, to, "index.ts")) wrong.push(`${relative(SRC, file)} -> ${relative(SRC, target)} (not the door)`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("keeps the status page's model a leaf the queue may stand on: src/status/model imports nothing", () => {
    const model = join(SRC, "status", "model") + "/";
    for (const [file, targets] of graph) {
      if (!file.startsWith(model)) continue;
      expect(targets.filter((target) => !target.startsWith(model)).map((target) => relative(SRC, target))).toEqual([]);
    }
  });

  it("keeps the failure vocabulary as ground: src/failure imports no other room", () => {
    const failure = join(SRC, "failure") + "/";
    for (const [file, targets] of graph) {
      if (!file.startsWith(failure)) continue;
      expect(targets.filter((target) => !target.startsWith(failure)).map((target) => relative(SRC, target))).toEqual([]);
    }
  });

  it("reaches every file of src/ from the command's entry (cli.ts, which bin/harness.js runs): no dead file", () => {
    const reached = new Set<string>();
    const pending = [join(SRC, "cli.ts")];
    for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
      if (reached.has(file)) continue;
      reached.add(file);
      pending.push(...(graph.get(file) ?? []));
    }
    expect([...graph.keys()].filter((file) => !reached.has(file)).map((file) => relative(SRC, file))).toEqual([]);
  });
});
