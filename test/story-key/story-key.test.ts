import { describe, expect, it } from "@jest/globals";
import { storyKey } from "../../src/story-key/index.js";
import { storyKeyOf } from "../../src/outbox/index.js";

describe("the story key", () => {
  it("names a story by its repository and issue: two repositories' issue #42 are two stories", () => {
    expect(storyKey("octo", "repo", 42)).toBe("octo/repo#42");
    expect(storyKey("octo", "other", 42)).not.toBe(storyKey("octo", "repo", 42));
  });

  it("is the key the outbox groups a story's writes by", () => {
    expect(storyKeyOf({ installationId: 7, owner: "octo", repo: "repo", issueNumber: 42, pullNumber: 9 })).toBe(storyKey("octo", "repo", 42));
  });
});
