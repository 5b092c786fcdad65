import { appRoutes } from "./app.js";
import { hookRoutes } from "./hook.js";
import { checkRoutes } from "./checks.js";
import { issueRoutes } from "./issues.js";
import { labelRoutes } from "./labels.js";
import { pullRoutes } from "./pulls.js";
import { repoRoutes } from "./repos.js";
import { gitRoutes } from "./git.js";
import { reviewRoutes } from "./reviews.js";
import { suiteRoutes } from "./suites.js";
import type { Route } from "./types.js";

export { graphqlRoute } from "./graphql.js";
export { addComment } from "./issues.js";
export { CHECK_RUN_TEXT_LIMIT_BYTES } from "./checks.js";
export { JOB_LOG_DOWNLOAD_PREFIX } from "./suites.js";
export { INSTALLATION_PERMISSIONS } from "./app.js";
export type { Route, RouteAuth } from "./types.js";

/**
 * Every REST route the fake serves, under `/api/v3`. To serve one more: add it to the file of
 * its area (its template exactly as in GitHub's OpenAPI description, so its body is validated).
 */
export const REST_ROUTES: readonly Route[] = [
  ...appRoutes,
  ...hookRoutes,
  ...repoRoutes,
  ...gitRoutes,
  ...issueRoutes,
  ...labelRoutes,
  ...pullRoutes,
  ...checkRoutes,
  ...reviewRoutes,
  ...suiteRoutes,
];
