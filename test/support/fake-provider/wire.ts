/** What the fake provider's handlers hand back, and the server-sent events format. */

/** Tokens a turn is said to cost. */
export interface Usage {
  input: number;
  output: number;
}

/** An answer: a JSON body, or a stream of server-sent events. */
export type Answer = { status: number; json: unknown } | { status: 200; stream: string[] };

/** One server-sent event. */
export function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
