/**
 * Request gates: while a gate is shut, matching requests wait unanswered (GitHub slow to take
 * them), and go on, in the order they came, once the test opens it. A test shows with one that
 * the App does not wait for a request (its job ends while the request is held), then that the
 * request still arrives. Opened by the test, never by a clock; the fake's `close` opens them all.
 */

export interface RequestGateSpec {
  /** HTTP method to match (any when absent). */
  method?: string;
  /** Matched against the request's path, as for failure windows. */
  path: RegExp;
}

/** A shut gate; `held` counts the requests that waited at it, `waiting` those waiting now. */
export interface RequestGate {
  readonly held: number;
  readonly waiting: number;
  open(): void;
}

interface Gate extends RequestGateSpec {
  held: number;
  waiting: number;
  shut: boolean;
  opened: Promise<void>;
  release: () => void;
}

export class RequestGates {
  private readonly gates: Gate[] = [];

  shut(spec: RequestGateSpec): RequestGate {
    let release = (): void => undefined;
    const opened = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gate: Gate = { ...spec, held: 0, waiting: 0, shut: true, opened, release };
    this.gates.push(gate);
    return {
      get held() {
        return gate.held;
      },
      get waiting() {
        return gate.waiting;
      },
      open: () => {
        gate.shut = false;
        gate.release();
      },
    };
  }

  /** Resolves once no shut gate matches the request (at once when none does). */
  async pass(method: string, path: string): Promise<void> {
    for (;;) {
      const gate = this.gates.find((candidate) => candidate.shut && (!candidate.method || candidate.method === method) && candidate.path.test(path));
      if (!gate) return;
      gate.held += 1;
      gate.waiting += 1;
      await gate.opened;
      gate.waiting -= 1;
    }
  }

  /** Opens every gate (the fake is closing: nothing may wait for a test that has ended). */
  openAll(): void {
    for (const gate of this.gates) {
      gate.shut = false;
      gate.release();
    }
  }
}
