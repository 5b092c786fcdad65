/**
 * The one source of the journal's events: each kind is defined here once, with TypeBox. The
 * TypeScript type {@link HistoryEvent} (in `events.ts`) is derived from these definitions, and
 * `schemas/execution-history.schema.json` is generated from them (`npm run schemas:journal`);
 * a test fails when the committed file drifts from what this module generates.
 */
import { Type, type Static, type TInteger, type TObject, type TOptional, type TProperties, type TSchema } from "@sinclair/typebox";
import type { CleanCloneResult } from "../workspace/index.js";
import { FAILURE_CLASSES } from "../failure/index.js";
import { FINDING_KINDS, RUNNERS } from "../integrity/index.js";

/** A `$ref` to one of the schema's own `$defs`, typed as the definition it points at. */
const ref = <T extends TSchema>(name: keyof typeof DEFS, _of: T) => Type.Unsafe<Static<T>>({ $ref: `#/$defs/${name}` });
/** A closed set of strings, as one `enum`. */
const oneOf = <const T extends readonly string[]>(values: T) => Type.Unsafe<T[number]>({ enum: [...values] });
/** One value, as a bare `const`. */
const literal = <const T extends string | boolean>(value: T, options: { description?: string } = {}) => Type.Unsafe<T>({ const: value, ...options });
const nullable = <T extends "string" | "integer">(type: T) => Type.Unsafe<(T extends "string" ? string : number) | null>({ type: [type, "null"] });
const name = () => Type.String({ minLength: 1 });
const names = () => Type.Array(name());
const count = (minimum: number) => Type.Integer({ minimum });
const duration = () => Type.Number({ minimum: 0 });
/** Output tails are bounded to 64 KiB. */
const tail = () => Type.String({ maxLength: 65536 });

const FailureClassSchema = oneOf(FAILURE_CLASSES);
const ShaSchema = Type.String({ pattern: "^[0-9a-f]{40}([0-9a-f]{24})?$" });
const AtSchema = Type.String({ format: "date-time" });
/** How a step with the network reached it: its own namespace, only through the egress proxy, or the host's network. */
const NetPolicySchema = oneOf(["own", "egress", "host"] as const);
export const StepPolicySchema = Type.Object(
  { sandboxed: Type.Boolean(), network: Type.Boolean(), net: Type.Optional(NetPolicySchema) },
  {
    additionalProperties: false,
    description:
      "The policy the step ran under: in the sandbox or not (HARNESS_SANDBOX=off), with or without the network, and (when it had it) which network: its own namespace, only through the egress proxy (HARNESS_EGRESS_ALLOW), or the host's (HARNESS_SANDBOX_NET=host or the sandbox off).",
  },
);

/** The shared definitions every event refers to. */
/** The policy a step that ran repository code ran under. */
export type StepPolicy = Static<typeof StepPolicySchema>;

const DEFS = { failureClass: FailureClassSchema, sha: ShaSchema, at: AtSchema, step_policy: StepPolicySchema };

const failureClass = () => ref("failureClass", FailureClassSchema);
const sha = () => ref("sha", ShaSchema);
const at = () => ref("at", AtSchema);
const policy = () => ref("step_policy", StepPolicySchema);
/** The clean-clone result has its own schema file; its type is the workspace's. */
const cleanCloneResult = () => Type.Unsafe<CleanCloneResult>({ $ref: "clean-clone-result.schema.json" });

/** One event kind: its `kind` and `at`, then its own fields; unknown keys are refused. */
function event<K extends string, P extends TProperties>(kind: K, properties: P, description?: string) {
  return Type.Object({ kind: literal(kind), at: at(), ...properties }, { additionalProperties: false, ...(description ? { description } : {}) });
}

const taskId = name;
const stage = name;
const attempt = () => count(1);
const wave = () => count(0);

/** At most this many findings (and as many accepted ones) go into one `integrity.finished` line; `omitted` counts the rest. */
export const MAX_JOURNALED_FINDINGS = 500;
const integrityFindingFields = () => ({
  file: Type.String({ maxLength: 4096 }),
  line: count(1),
  kind: oneOf(FINDING_KINDS),
  message: Type.String({ maxLength: 1000 }),
});
const integrityFinding = () => Type.Object(integrityFindingFields(), { additionalProperties: false });
const runCounts = () =>
  Type.Object(Object.fromEntries(RUNNERS.map((runner) => [runner, Type.Optional(count(0))])) as Record<(typeof RUNNERS)[number], TOptional<TInteger>>, {
    additionalProperties: false,
  });

/** Every event kind of the journal, in the order the schema lists them. */
export const EVENT_SCHEMAS = [
  event("run.started", {
    storyId: name(),
    runId: name(),
    taskId: Type.Optional(taskId()),
    title: Type.String(),
    stages: Type.Array(name(), { minItems: 1 }),
    maxAttempts: count(1),
    readmission: Type.Boolean(),
    unsandboxed: Type.Optional(literal(true, { description: "Present when the operator ran the story with HARNESS_SANDBOX=off." })),
    network: Type.Optional(
      Type.Unsafe<"own" | "egress" | "host">({
        enum: ["own", "egress", "host"],
        description: "How networked steps (provisioning, agents) reached the network, when the story ran sandboxed.",
      }),
    ),
    checks: Type.Optional(
      Type.Array(Type.Object({ stage: name(), kind: oneOf(["gate", "review", "clean-clone", "plan", "integrity"] as const) }, { additionalProperties: false })),
    ),
  }),
  event("worktree.created", { taskId: taskId(), worktree: name(), branch: name(), base: name() }),
  event("provision.succeeded", { taskId: taskId(), cmd: nullable("string"), durationMs: duration(), skipped: Type.Boolean(), phase: name() }),
  event("provision.failed", { taskId: taskId(), cmd: nullable("string"), exitCode: nullable("integer"), logTail: tail() }),
  event(
    "baseline.started",
    { taskId: taskId() },
    "The baseline began, in a checkout of the base commit of its own, beside the task's provisioning and its first seat; its `baseline.finished` comes before the task's second stage starts.",
  ),
  event(
    "baseline.finished",
    {
      taskId: taskId(),
      command: name(),
      commit: sha(),
      exitCode: Type.Optional(Type.Integer()),
      timedOut: Type.Boolean(),
      outputTail: tail(),
      durationMs: duration(),
      policy: Type.Optional(policy()),
      cached: Type.Optional(
        literal(true, {
          description:
            "Present when this task did not run it: the result kept for the same base (HARNESS_HOME/baselines), or another task's run of it at the same time.",
        }),
      ),
    },
    "The suite run once on the commit the task starts from, beside the first seat and before the second stage: it decides whether a red gate is the change's failure or the base's. `cached` when the result of an earlier run on the same base commit, lockfile, test command and sandbox policy was used instead.",
  ),
  event("stage.started", { taskId: taskId(), stage: stage(), attempt: attempt() }),
  event(
    "seat.rerun",
    { taskId: taskId(), stage: stage(), attempt: attempt(), reason: Type.String({ maxLength: 1000 }), logPath: name() },
    "A judging seat left no usable verdict, so it is run once more with a prompt saying what was wrong (not a new attempt); `logPath` is the re-run's agent log.",
  ),
  event(
    "seat.unavailable",
    {
      taskId: taskId(),
      stage: stage(),
      attempt: attempt(),
      command: name(),
      reason: oneOf(["not-installed", "root-refused", "auth-missing", "rate-limited", "provider-unreachable"] as const),
      message: Type.String({ maxLength: 1000 }),
      resetAt: Type.Optional(at()),
    },
    "An agent of a seat could not work (provider unreachable, no credentials, rate limited, refused to run as root, not installed): not an attempt of the change.",
  ),
  event(
    "seat.parked",
    { taskId: taskId(), stage: stage(), attempt: attempt(), until: at() },
    "Every binding of a seat was unavailable and one named its reset time: the seat waits until then and is tried again.",
  ),
  event(
    "seat.usage",
    {
      taskId: taskId(),
      stage: stage(),
      attempt: attempt(),
      turns: count(0),
      inputTokens: count(0),
      outputTokens: count(0),
      durationMs: duration(),
      badLines: count(0),
      transcript: name(),
      launchedAt: Type.Optional(at()),
      story: Type.Optional(
        Type.Object(
          { runs: count(1), tokens: count(0), agentMs: duration() },
          {
            additionalProperties: false,
            description: "The story's totals after this launch, every run of it counted (the first, retries, revision rounds): what its budget is held to.",
          },
        ),
      ),
    },
    "What one launch of a seat's agent spent, read from its transcript (transcript.jsonl in the stage's folder): model turns, input and output tokens, wall time, and the lines of its stream that were not JSON. `launchedAt` is when the harness began launching the agent (after the stage's gate and the baseline's answer, before the sandbox was prepared): from it to this event is the seat's wall time as the harness spent it.",
  ),
  event("stage.finished", {
    taskId: taskId(),
    stage: stage(),
    attempt: attempt(),
    outcome: oneOf(["passed", "failed"] as const),
    durationMs: duration(),
    failureClass: Type.Optional(failureClass()),
    detail: Type.Optional(Type.String()),
  }),
  event("gate.finished", {
    taskId: taskId(),
    stage: stage(),
    attempt: attempt(),
    command: name(),
    exitCode: Type.Optional(Type.Integer()),
    timedOut: Type.Boolean(),
    outputTail: tail(),
    durationMs: duration(),
    policy: Type.Optional(policy()),
    /** The suite's whole output (the tail is its end). */
    logPath: Type.Optional(name()),
    where: Type.Optional(
      literal("clean-clone", {
        description:
          "The gate was the stage's clean-clone check: the suite ran once, in a fresh clone of the committed change, and the fields above are that run's. Absent: the suite ran in the worktree.",
      }),
    ),
    worktree: Type.Optional(
      Type.Object(
        { exitCode: Type.Optional(Type.Integer()), timedOut: Type.Boolean(), outputTail: tail(), durationMs: duration(), logPath: Type.Optional(name()) },
        {
          additionalProperties: false,
          description:
            "The clean clone failed, so the suite was re-run in the worktree to tell a change that passes where it stands but not where it ships (clean-clone-failed) from a failing change (suite-failed).",
        },
      ),
    ),
  }),
  event("verdict.recorded", {
    taskId: taskId(),
    stage: stage(),
    attempt: attempt(),
    verdict: oneOf(["pass", "fail"] as const),
    findings: Type.Array(Type.String()),
    retryGuidance: Type.Optional(Type.String()),
  }),
  event("clean_clone.finished", {
    taskId: taskId(),
    stage: stage(),
    attempt: attempt(),
    artifact: name(),
    result: cleanCloneResult(),
    policy: Type.Optional(policy()),
    /** The clean clone's whole output (provisioning and suite). */
    logPath: Type.Optional(name()),
  }),
  event(
    "integrity.finished",
    {
      taskId: taskId(),
      stage: stage(),
      attempt: attempt(),
      base: sha(),
      merged: Type.Optional(sha()),
      files: count(0),
      findings: Type.Array(integrityFinding(), { maxItems: MAX_JOURNALED_FINDINGS }),
      accepted: Type.Array(Type.Object({ ...integrityFindingFields(), acceptedBy: name() }, { additionalProperties: false }), {
        maxItems: MAX_JOURNALED_FINDINGS,
      }),
      omitted: Type.Optional(count(1)),
      counts: Type.Object(
        { compared: Type.Boolean(), reason: Type.Optional(Type.String()), base: Type.Optional(runCounts()), head: Type.Optional(runCounts()) },
        { additionalProperties: false },
      ),
      unread: Type.Array(Type.String(), { maxItems: MAX_JOURNALED_FINDINGS }),
      durationMs: duration(),
    },
    "The test-integrity gate compared the change with its base: what weakened the suite (findings), what the repository or a writer accepted, and the tests each runner reported on the base and in the clean clone. `merged` is present when it judged a planned task's work merged onto the story branch (that merge commit) rather than the task's worktree.",
  ),
  event("attempt.archived", { taskId: taskId(), attempt: attempt(), archiveDir: name() }),
  event("retry.scheduled", {
    taskId: taskId(),
    failedAttempt: attempt(),
    nextAttempt: attempt(),
    fromStage: stage(),
    retryStage: stage(),
    failureClass: failureClass(),
    reason: Type.String(),
  }),
  event("story.completed", { taskId: Type.Optional(taskId()), branch: name(), commit: sha() }),
  /** `commit` is the commit of the work so far on `branch`, when one was made (the App pushes it). */
  event("story.blocked", {
    taskId: Type.Optional(taskId()),
    failureClass: failureClass(),
    detail: Type.String(),
    branch: Type.Optional(name()),
    commit: Type.Optional(sha()),
    blockedTasks: Type.Optional(names()),
  }),
  /** A task of the story's plan: its wave (1-based), its declared files and what blocks it. */
  event("task.planned", { taskId: taskId(), title: Type.String(), wave: wave(), files: names(), blockedBy: names(), stages: names() }),
  /** A task took a slot: its worktree is made and provisioned inside that slot. */
  event("task.started", { taskId: taskId(), wave: wave(), attempt: attempt() }),
  /** A task left its slot; `commit` is its work when it completed, `kept` when an earlier run completed it. */
  event("task.finished", {
    taskId: taskId(),
    outcome: oneOf(["completed", "blocked"] as const),
    attempt: attempt(),
    durationMs: duration(),
    commit: Type.Optional(sha()),
    failureClass: Type.Optional(failureClass()),
    detail: Type.Optional(Type.String()),
    kept: Type.Optional(Type.Boolean()),
  }),
  event("wave.started", { wave: wave(), tasks: names(), base: sha() }),
  /** The wave's completed tasks merged onto the story branch, in plan order. */
  event("wave.merged", { wave: wave(), merged: names(), commit: sha() }),
  /** One round of a stage's fix ladder: the fixer seat worked on a failed gate or verdict; the stage runs again after it. */
  event("fix.finished", {
    taskId: taskId(),
    stage: stage(),
    attempt: attempt(),
    round: count(1),
    seat: name(),
    fixing: failureClass(),
    outcome: oneOf(["passed", "failed"] as const),
    durationMs: duration(),
    failureClass: Type.Optional(failureClass()),
    detail: Type.Optional(Type.String()),
  }),
] as const;

/** One line of the journal, as the schemas above define it. */
export const HistoryEventSchema = Type.Union([...EVENT_SCHEMAS]);

/**
 * One line of the journal. Each kind is defined once, here; this type and
 * `schemas/execution-history.schema.json` both come from these definitions.
 */
export type HistoryEvent = Static<typeof HistoryEventSchema>;

export type HistoryEventKind = HistoryEvent["kind"];

/** The `$defs` name of one event kind's schema (`run.started` → `event_run_started`). */
const defName = (kind: string): string => `event_${kind.replace(/[^a-z0-9]+/g, "_")}`;

/**
 * The JSON Schema of one journal line, as written to `schemas/execution-history.schema.json`:
 * the kind selects the event's definition; unknown kinds and unknown keys are refused.
 */
export function executionHistorySchema(): Record<string, unknown> {
  const kindOf = (schema: TObject): string => String((schema.properties.kind as unknown as { const: string }).const);
  const kinds = EVENT_SCHEMAS.map(kindOf);
  // A JSON round trip drops TypeBox's symbol keys and leaves the plain schema.
  const plain = (schema: TSchema): unknown => JSON.parse(JSON.stringify(schema));
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://story-harness.dev/schemas/execution-history.schema.json",
    title: "One line of execution-history.ndjson",
    description:
      "Every step the coordinator takes, one JSON object per line. Written by the harness, so keys are camelCase. The kind selects the shape; unknown kinds and unknown keys are refused. Generated from src/pipeline/event-schemas.ts (npm run schemas:journal): edit that file, not this one.",
    type: "object",
    required: ["kind", "at"],
    properties: { kind: { enum: kinds } },
    allOf: kinds.map((kind) => ({ if: { properties: { kind: { const: kind } }, required: ["kind"] }, then: { $ref: `#/$defs/${defName(kind)}` } })),
    $defs: {
      ...Object.fromEntries(Object.entries(DEFS).map(([key, schema]) => [key, plain(schema)])),
      ...Object.fromEntries(EVENT_SCHEMAS.map((schema) => [defName(kindOf(schema)), plain(schema)])),
    },
  };
}

/** The schema file's text: two-space JSON and a final newline. */
export function executionHistorySchemaText(): string {
  return `${JSON.stringify(executionHistorySchema(), null, 2)}\n`;
}
