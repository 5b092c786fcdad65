import { schemas } from "../../schema/index.js";
import type { StoryJob } from "../port.js";

/** Validates a job before it is written to Redis; throws naming the field that is wrong. */
export function checkStoryJob(job: StoryJob): StoryJob {
  return schemas().validate<StoryJob>("queue-story-job", job, `queue job of ${job.storyKey}`);
}

/** A job's data read back from Redis; undefined when it is not a story job (foreign or damaged). */
export function readStoryJob(data: unknown): StoryJob | undefined {
  return schemas().issues("queue-story-job", data).length === 0 ? (data as StoryJob) : undefined;
}
