/**
 * GitHub waits 10 s for a webhook's answer. A handler's wait (a permission check, the
 * enqueue) normally takes milliseconds; when GitHub or the disk is slow, the handler gets at
 * most this budget before the delivery is answered anyway, and its work finishes afterwards
 * (its outcome or failure is logged then). With the body's own deadline at the door
 * (`BODY_DEADLINE_MS`), the answer stays inside GitHub's window.
 */
import { errorDetails, type GitHubLog } from "../index.js";

export const HANDLER_BUDGET_MS = 4_000;

/**
 * Resolves with `work`'s value when it settles within `budgetMs`, else with undefined (and
 * `late` is called with the value once `work` ends). A failure within the budget is thrown,
 * so Probot answers 500 and GitHub may redeliver; a failure after it is logged.
 */
export function withinBudget<T>(work: Promise<T>, budgetMs: number, late: (value: T) => void, log: GitHubLog, what: object): Promise<T | undefined> {
  // One timer and one promise per delivery: no race of promises (a race was one of the App's own
  // allocations per delivery, counted with `npm run bench -- webhook-latency --alloc`).
  return new Promise<T | undefined>((resolve, reject) => {
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      log.warn({ ...what, budgetMs }, "a webhook handler is still working; GitHub is answered now and the work goes on");
      resolve(undefined);
    }, budgetMs);
    work.then(
      (value) => {
        clearTimeout(timer);
        if (expired) late(value);
        else resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (expired) log.error({ ...what, err: errorDetails(error) }, "a webhook handler failed after the answer");
        else reject(error);
      },
    );
  });
}
