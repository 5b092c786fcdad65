/** The logging the GitHub room needs; Probot's pino logger satisfies it. */
export interface GitHubLog {
  info(details: object, message?: string): void;
  warn(details: object, message?: string): void;
  error(details: object, message?: string): void;
}

/** The parts of an error worth logging: never request headers, which may hold a token. */
export function errorDetails(error: unknown): { message: string; status?: number } {
  if (error instanceof Error) {
    const status = (error as { status?: unknown }).status;
    return typeof status === "number" ? { message: error.message, status } : { message: error.message };
  }
  return { message: String(error) };
}

/** True for an Octokit request error with this HTTP status. */
export function hasStatus(error: unknown, status: number): boolean {
  return error instanceof Error && (error as { status?: unknown }).status === status;
}
