export { preflight, assertPreflight, PreflightError, type PreflightInput, type PreflightProblem } from "./preflight.js";
export { nearestName, didYouMean, editDistance } from "./did-you-mean.js";
export { findOnPath, firstProgram } from "./programs.js";
export type { StoryBase } from "./repository.js";
