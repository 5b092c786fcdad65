/**
 * What the fake model provider answers: a script per seat, one step per turn. The seat is read
 * from the prompt ("You are the verifier."), the turn from the tool results the conversation
 * already holds, so a CLI that retries a request gets the same answer again.
 */

/** One turn of a seat: a tool call, a final answer, or a way for the provider to fail. */
export type Step =
  /** Run a shell command with the CLI's own shell tool. */
  | { kind: "shell"; command: string }
  /** End the seat with this text (stop_reason end_turn / a completed message). */
  | { kind: "answer"; text: string }
  /** Answer every request of this turn with an HTTP error (the CLI's retries included). */
  | { kind: "status"; status: number; errorType: string }
  /** Stream bytes that are not the API's events. */
  | { kind: "garbage" }
  /** Accept the request and never answer (until the provider stops). */
  | { kind: "hang" };

/** The steps of each seat, by seat name. */
export type Script = Readonly<Record<string, readonly Step[]>>;

const SEAT = /You are the (implementer|tester|verifier|documenter|reviewer|fixer|planner)\b/;

/** The seat a prompt is written for, or undefined for a request that carries no seat's prompt (a CLI's side request). */
export function seatOf(text: string): string | undefined {
  return SEAT.exec(text)?.[1];
}

/** The step of `seat` at `turn`; past the script's end a seat ends with a short answer. */
export function stepOf(script: Script, seat: string | undefined, turn: number): Step {
  const steps = seat === undefined ? undefined : script[seat];
  return steps?.[turn] ?? { kind: "answer", text: "Done." };
}

/** A script every seat of the default workflow completes: the implementer writes the file, the verifier passes it. */
export function completingScript(options: { file: string; content: string }): Script {
  const verdict = JSON.stringify({ verdict: "pass", findings: [`${options.file} holds the greeting`] });
  return {
    implementer: [
      { kind: "shell", command: `printf '%s\\n' ${shq(options.content)} > ${shq(options.file)}` },
      { kind: "answer", text: "Implemented." },
    ],
    tester: [
      { kind: "shell", command: `test -f ${shq(options.file)} && echo present` },
      { kind: "answer", text: "Tested." },
    ],
    verifier: [
      { kind: "shell", command: `cat ${shq(options.file)}` },
      { kind: "shell", command: `printf '%s' ${shq(verdict)} > "$HARNESS_ARTIFACT_DIR/verdict.json"` },
      { kind: "answer", text: "Verified: pass." },
    ],
    documenter: [{ kind: "answer", text: "Nothing to document." }],
  };
}

/** Quotes for `/bin/sh`. */
export function shq(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
