import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { exec } from "../../src/exec/index.js";
import { git } from "../../src/workspace/index.js";
import { loadWorkflow, parseHarnessConfig, readJournal, runStory, type HistoryEvent } from "../../src/pipeline/index.js";
import { Sandbox, sandboxSettingsFromEnv } from "../../src/sandbox/index.js";
import { initRepo, makeTempDir, processWithTag, removeTempDirs } from "../support/tmp.js";
import { recordingReporter } from "../pipeline/helpers.js";
import { attackScript, hostileConfig, SELF_REPORTED, type Targets } from "./hostile-repo.js";
import { until } from "../support/poll.js";

const LOG_CAP = 4 * 1024 * 1024;
const MAX_PROCESSES = 200;

const stopDecoy = new AbortController();
let decoy: Promise<unknown> | undefined;
let server: Server | undefined;
afterAll(async () => {
  stopDecoy.abort();
  await decoy;
  server?.close();
  removeTempDirs();
});

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));
}

async function story(repoDir: string, home: string, id: string, configText: string, sandbox: Sandbox) {
  const outcome = await runStory({
    repoDir,
    story: { id, title: "Greet the user", body: "Write feature.txt saying hello." },
    branch: `harness/story-${id}`,
    baseRef: "HEAD",
    config: parseHarnessConfig(configText, "harness.yml"),
    workflow: loadWorkflow(),
    harnessHome: home,
    reporter: recordingReporter(),
    agentEnvAllow: [],
    sandbox,
  });
  return { outcome, journal: readJournal(join(outcome.runDir, "execution-history.ndjson")) as HistoryEvent[] };
}

describe("a hostile repository", () => {
  it("is contained in provisioning, every agent and the suite, and a second repository's story is unaffected", async () => {
    const root = makeTempDir("harness-hostile-");
    const home = join(root, "home");
    const marker = `MARKER-${process.pid}-${Date.now()}`;
    const appDir = join(root, "app");
    mkdirSync(appDir);
    writeFileSync(join(appDir, ".env"), `PRIVATE_KEY=${marker}\n`);
    writeFileSync(join(appDir, "key.pem"), `-----BEGIN RSA PRIVATE KEY-----\n${marker}\n`);
    // A stand-in for the App: the key in its environment, its folder as its working directory.
    // (exec never passes the App's real credential names, so the stand-in's is another name.)
    let appPid = 0;
    decoy = exec(["sleep", "600"], { cwd: appDir, env: { set: { HARNESS_DECOY_KEY: marker } }, signal: stopDecoy.signal, onSpawn: (pid) => (appPid = pid) });
    await until("the stand-in App to start", () => appPid > 0, 5000);
    mkdirSync(join(home, "queue"), { recursive: true });
    writeFileSync(join(home, "queue", "job.json"), "{}\n");
    const otherWorktree = join(home, "worktrees", "other-story", "task-1");
    mkdirSync(otherWorktree, { recursive: true });
    writeFileSync(join(otherWorktree, "secret.txt"), `${marker}\n`);
    const phasesConnected: string[] = [];
    server = createServer((socket) => {
      socket.on("error", () => undefined);
      socket.on("data", (data) => phasesConnected.push(data.toString()));
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const targets: Targets = {
      appDir,
      appPid,
      marker,
      harnessHome: home,
      otherWorktree,
      port: (server.address() as { port: number }).port,
      filterMarker: join(root, "filter-ran"),
      daemonTag: `harness-hostile-daemon-${process.pid}`,
      forks: 1000,
      floodBytes: 64 * 1024 * 1024,
    };
    const hostile = join(root, "hostile");
    await initRepo(hostile, { "README.md": "# hostile\n", ".harness-test/attack.sh": attackScript(targets) });
    const cacheConfigBefore = readFileSync(join(hostile, ".git", "config"), "utf8");
    const operatorGitConfig = join(process.env.HOME ?? "/nonexistent", ".gitconfig");
    const operatorGitConfigBefore = existsSync(operatorGitConfig) ? readFileSync(operatorGitConfig, "utf8") : undefined;

    const sandbox = new Sandbox({ ...sandboxSettingsFromEnv({}), maxProcesses: MAX_PROCESSES, logCapBytes: LOG_CAP });
    const first = await story(hostile, home, "hostile", hostileConfig(), sandbox);

    // Reported honestly: it ran to its end, every suite run says it was sandboxed without network.
    expect([first.outcome.status, first.outcome.detail]).toEqual(["completed", undefined]);
    const gates = first.journal.filter((event): event is Extract<HistoryEvent, { kind: "gate.finished" }> => event.kind === "gate.finished");
    expect(gates.map((gate) => gate.policy)).toEqual([{ sandboxed: true, network: false }]);
    const cleanClones = first.journal.filter(
      (event): event is Extract<HistoryEvent, { kind: "clean_clone.finished" }> => event.kind === "clean_clone.finished",
    );
    expect(cleanClones.map((event) => [event.result.ran, event.result.exitCode, event.policy])).toEqual([[true, 0, { sandboxed: true, network: false }]]);

    // What each phase found (its own words, judged by whether the read or write worked).
    const logs = filesUnder(first.outcome.runDir).filter((path) => path.endsWith(".log"));
    const lines = logs.flatMap((path) => readFileSync(path, "latin1").split("\n")).filter((line) => line.startsWith("ATTACK "));
    const phases = new Set(lines.map((line) => line.split(" ")[1]));
    expect([...phases].sort()).toEqual(["agent", "provision", "suite"]);
    // Provisioning once, the baseline suite on the base commit, four seats, the suite gate and the clean-clone suite.
    expect(lines).toHaveLength(SELF_REPORTED.length * 8);
    const escaped = lines.filter((line) => line.endsWith(" ESCAPED"));

    // What only the outside can judge.
    const outside: Record<string, boolean> = {
      "cache config unchanged": readFileSync(join(hostile, ".git", "config"), "utf8") === cacheConfigBefore,
      "no replace refs in the cache": (await git(["for-each-ref", "refs/replace"], { cwd: hostile })) === "",
      "no attacker filter ran in the App's git": !existsSync(targets.filterMarker),
      "the operator's ~/.gitconfig unchanged":
        (existsSync(operatorGitConfig) ? readFileSync(operatorGitConfig, "utf8") : undefined) === operatorGitConfigBefore,
      "the other worktree unchanged": !existsSync(join(otherWorktree, "pwned")),
      // Provisioning and agents have the network, in a namespace of their own: the host's loopback is not in it.
      "no phase reached the host's loopback server": phasesConnected.length === 0,
      "no daemon outlived its step": await until("the daemon to end with its step", () => !processWithTag(targets.daemonTag), 5000).then(() => true),
      [`every log within its cap of ${LOG_CAP} bytes`]: logs.every((path) => statSync(path).size <= LOG_CAP + 4096),
    };

    // A second repository's story afterwards: its provisioning runs as `sh -lc`, where the
    // attacker's `test() { return 0; }` in a shared ~/.profile would have changed the outcome.
    const honest = join(root, "honest");
    await initRepo(honest, {
      "README.md": "# honest\n",
      ".harness-test/agent.sh":
        'case "$HARNESS_STAGE" in implementer) echo hi > feature.txt ;; verifier) printf \'{"verdict":"pass","findings":[]}\\n\' > "$HARNESS_ARTIFACT_DIR/verdict.json" ;; esac\n',
    });
    const honestConfig = [
      "agent:",
      "  command: sh .harness-test/agent.sh",
      "test:",
      "  command: test -f feature.txt",
      "provision:",
      '  command: "if test -e /nonexistent-harness-file; then echo poisoned > poisoned.txt; fi"',
      "",
    ].join("\n");
    const second = await story(honest, home, "honest", honestConfig, sandbox);
    expect(second.outcome).toMatchObject({ status: "completed" });
    const files = await git(["ls-tree", "-r", "--name-only", second.outcome.commit ?? "HEAD"], { cwd: honest });
    outside["the next story's login shell read a clean profile"] = !files.split("\n").includes("poisoned.txt");

    const failedOutside = Object.entries(outside)
      .filter(([, contained]) => !contained)
      .map(([name]) => name);
    const total = lines.length + Object.keys(outside).length;
    const contained = total - escaped.length - failedOutside.length;
    console.log(`hostile repository: ${contained}/${total} attacks contained`);
    expect(escaped).toEqual([]);
    expect(failedOutside).toEqual([]);
  }, 300_000);
});
