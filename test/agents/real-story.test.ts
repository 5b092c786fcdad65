/**
 * A whole story with each real agent CLI (test/agents/real-cli-install.ts pins them) against the
 * fake model provider: the credentials the provider received, each seat's turns, the verdict the
 * harness validated, and the commit's contents. HARNESS_HOME is in this checkout's cache folder,
 * as a deployment's is outside the OS temporary folder: Codex's verifier must write its verdict
 * into the run directory there, outside its worktree.
 */
import { readFileSync } from "node:fs";
import { schemas } from "../../src/schema/index.js";
import { git } from "../../src/workspace/index.js";
import { completingScript, startFakeProvider, type FakeProvider } from "../support/fake-provider/index.js";
import { commitFiles, findFiles, providerAsSeenByStep, runRealStory, useRealStories, type StoryRun } from "./real-story.js";

const { clis, homes, providers } = useRealStories();

const SCRIPT = completingScript({ file: "feature.txt", content: "hello" });
const TEST = "grep -qx hello feature.txt";

async function provider(): Promise<FakeProvider> {
  const started = await startFakeProvider({ script: SCRIPT });
  providers.push(started);
  return started;
}

/** What every story must show: exit 0, the turns of each seat, a validated verdict, the commit holding the work and nothing of the harness. */
async function expectCompleted(run: StoryRun, fake: FakeProvider, served = (seat: string) => fake.turnsOf(seat).length): Promise<void> {
  homes.push(run.home);
  expect({ exitCode: run.exitCode, stderr: run.stderr.slice(-3000) }).toMatchObject({ exitCode: 0 });
  for (const [seat, turns] of [
    ["implementer", [0, 1]],
    ["tester", [0, 1]],
    ["verifier", [0, 1, 2]],
    ["documenter", [0]],
  ] as const) {
    expect({ seat, turns: fake.turnsOf(seat).map((request) => request.turn) }).toEqual({ seat, turns });
  }
  // Each seat's whole conversation is kept, with the turns the provider served and the tokens it reported (100 in, 20 out an answer).
  const journal = readFileSync(findFiles(run.runDir, "execution-history.ndjson")[0] ?? "", "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { kind: string; stage?: string; turns?: number; inputTokens?: number; outputTokens?: number; badLines?: number });
  for (const seat of ["implementer", "tester", "verifier", "documenter"]) {
    const turns = served(seat);
    const usage = journal.filter((event) => event.kind === "seat.usage" && event.stage === seat);
    expect({ seat, usage }).toMatchObject({ seat, usage: [{ turns, badLines: 0 }] });
    expect({ seat, input: usage[0]?.inputTokens, output: usage[0]?.outputTokens }).toEqual({ seat, input: 100 * turns, output: 20 * turns });
    const transcripts = findFiles(run.runDir, "transcript.jsonl").filter((path) => path.includes(`/${seat}/`));
    expect(transcripts).toHaveLength(1);
    const text = readFileSync(transcripts[0] ?? "", "utf8");
    for (const line of text.split("\n").filter((entry) => entry !== "")) expect(() => JSON.parse(line) as unknown).not.toThrow();
    expect(text).not.toMatch(/sk-(ant-)?story-key/);
  }
  const verdicts = findFiles(run.runDir, "verdict.json");
  expect(verdicts).toHaveLength(1);
  const verdict: unknown = JSON.parse(readFileSync(verdicts[0] ?? "", "utf8"));
  expect(schemas().issues("verdict", verdict)).toEqual([]);
  expect(verdict).toMatchObject({ verdict: "pass" });
  const commit = /^completed +commit ([0-9a-f]{40})/m.exec(run.stdout)?.[1] ?? "";
  expect(commit).toMatch(/^[0-9a-f]{40}$/);
  expect(await commitFiles(run.repo, commit)).toEqual([".github/harness.yml", "README.md", "feature.txt"]);
  expect(await git(["show", `${commit}:feature.txt`], { cwd: run.repo, readOnly: true })).toBe("hello");
}

describe("a whole story with the real CLIs", () => {
  it("Claude Code: every seat through ANTHROPIC_BASE_URL with the operator's key and nothing else, the verdict validated, the work committed", async () => {
    const fake = await provider();
    const seen = providerAsSeenByStep(fake);
    const run = await runRealStory(clis(), "claude-code", { ANTHROPIC_API_KEY: "sk-ant-story-key", ANTHROPIC_BASE_URL: seen.url }, seen.netAllow, TEST);
    await expectCompleted(run, fake);
    const calls = fake.requests.filter((request) => request.api === "anthropic");
    expect(calls.length).toBeGreaterThanOrEqual(8);
    expect(new Set(calls.map((request) => request.apiKey))).toEqual(new Set(["sk-ant-story-key"]));
    // Only the model API: the preset turns off the CLI's other traffic (its probe of the base URL among it).
    expect(fake.requests.filter((request) => request.api !== "anthropic")).toEqual([]);
  }, 600_000);

  it("Codex: OPENAI_BASE_URL reaches its provider, its verifier writes the verdict outside the worktree, and its commands keep the network", async () => {
    const fake = await startFakeProvider({
      script: {
        ...SCRIPT,
        // Its own sandbox must not cut the network the product promises agents (a registry, here the provider's host).
        implementer: [{ kind: "shell", command: `curl -s -o /dev/null "$PROBE_URL/network-probe"` }, ...(SCRIPT.implementer ?? [])],
      },
    });
    providers.push(fake);
    const seen = providerAsSeenByStep(fake);
    const run = await runRealStory(
      clis(),
      "codex",
      { OPENAI_API_KEY: "sk-story-key", OPENAI_BASE_URL: `${seen.url}/v1`, PROBE_URL: seen.url },
      seen.netAllow,
      TEST,
    );
    expect(fake.requests.filter((request) => request.path === "/network-probe")).toHaveLength(1);
    const probeless = {
      ...fake,
      turnsOf: (seat: string) =>
        fake
          .turnsOf(seat)
          .filter((request) => seat !== "implementer" || request.turn > 0)
          .map((request) => ({ ...request, turn: seat === "implementer" ? request.turn - 1 : request.turn })),
    };
    // The transcript counts the probe's turn too: it was served.
    await expectCompleted(run, probeless, (seat) => fake.turnsOf(seat).length);
    const calls = fake.requests.filter((request) => request.api === "openai");
    expect(new Set(calls.map((request) => request.authorization))).toEqual(new Set(["Bearer sk-story-key"]));
  }, 600_000);
});
