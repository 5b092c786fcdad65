/**
 * Failure injection: a test opens a window during which matching requests get an answer GitHub
 * gives on a bad day (a secondary rate limit, a 502, a refused push), and closes it when it has
 * seen what it wanted. Windows are opened and closed by the test, never by a clock, so a test
 * does not depend on timing. Injected answers are recorded as requests, not as unexpected.
 */

/** What a matching request is answered with. */
export type InjectedFailure =
  /** 403 with `retry-after`, GitHub's secondary rate limit. */
  | { kind: "secondary-rate-limit"; retryAfterSeconds?: number }
  /** 502 Bad Gateway (REST, GraphQL, or git's smart HTTP: a push that does not get through). */
  | { kind: "bad-gateway" }
  /** A push refused by the server, with GitHub's words (a file over 100 MB, push protection). */
  | { kind: "push-refused"; message?: string }
  /**
   * Not a refusal: commits made through `POST …/git/commits` carry a signature header, as GitHub
   * signs some API commits, so their ids differ from the one the caller's `git commit-tree` makes.
   */
  | { kind: "signed-commits" }
  /** A final refusal of an API call with GitHub's status and words (a repository rule, a 403), not GitHub being down. */
  | { kind: "refused"; status: number; message: string };

export interface FailureWindowSpec {
  /** HTTP method to match (any when absent). */
  method?: string;
  /** Matched against the request's path (`/api/v3/repos/…`, `/api/graphql`, `/<owner>/<name>.git/git-receive-pack`). */
  path: RegExp;
  failure: InjectedFailure;
}

/** An open window; `served` counts the requests it answered. */
export interface FailureWindow {
  readonly served: number;
  readonly open: boolean;
  close(): void;
}

interface Rule extends FailureWindowSpec {
  served: number;
  open: boolean;
}

/** GitHub's refusal of a push holding a file over its size limit. */
export const DEFAULT_PUSH_REFUSAL =
  "GH001: Large files detected. You may want to try Git Large File Storage - https://git-lfs.github.com.\n" +
  "error: File big.bin is 120.00 MB; this exceeds GitHub's file size limit of 100.00 MB";

/** The open windows of one fake. */
export class FailureWindows {
  private readonly rules: Rule[] = [];

  open(spec: FailureWindowSpec): FailureWindow {
    const rule: Rule = { ...spec, served: 0, open: true };
    this.rules.push(rule);
    return {
      get served() {
        return rule.served;
      },
      get open() {
        return rule.open;
      },
      close: () => {
        rule.open = false;
      },
    };
  }

  /** The failure for this request, counting it as served; undefined when no open window matches. */
  take(method: string, path: string): InjectedFailure | undefined {
    const rule = this.rules.find((candidate) => candidate.open && (!candidate.method || candidate.method === method) && candidate.path.test(path));
    if (!rule) return undefined;
    rule.served += 1;
    return rule.failure;
  }
}

/** The HTTP answer of an injected API failure. */
export function failureAnswer(failure: InjectedFailure): { status: number; headers: Record<string, string>; json: unknown } {
  if (failure.kind === "secondary-rate-limit") {
    return {
      status: 403,
      headers: { "retry-after": String(failure.retryAfterSeconds ?? 1) },
      json: {
        message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
        status: "403",
      },
    };
  }
  if (failure.kind === "refused")
    return {
      status: failure.status,
      headers: {},
      json: { message: failure.message, documentation_url: "https://docs.github.com/rest", status: String(failure.status) },
    };
  return { status: 502, headers: {}, json: { message: "Server Error" } };
}
