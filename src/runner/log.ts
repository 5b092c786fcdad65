/** Where the runner writes what happens to a story: the App's logger, or a test's. */
export interface RunnerLog {
  info(details: object, message?: string): void;
  warn(details: object, message?: string): void;
  error(details: object, message?: string): void;
}
