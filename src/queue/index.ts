export { storyKey, type StoryQueue, type StoryJob, type JobRepository, type EnqueueOutcome } from "./port.js";
