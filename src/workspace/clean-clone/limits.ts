/** Longest any one git step of the construction may take. */
export const CLEAN_CLONE_STEP_TIMEOUT_MS = 600_000;
