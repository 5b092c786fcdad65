/**
 * The fake's memory: plain records that tests read directly. Everything lives here except the
 * bare repositories, which are real git repositories on disk (see repos.ts).
 */

/** A role on a repository, as `getCollaboratorPermissionLevel` knows it. */
export type RepoRole = "admin" | "maintain" | "write" | "triage" | "read" | "none";

export interface RepoRecord {
  id: number;
  nodeId: string;
  owner: string;
  name: string;
  fullName: string;
  defaultBranch: string;
  bareDir: string;
  createdAt: string;
  /** Role per login; the owner is admin unless set otherwise. */
  roles: Map<string, RepoRole>;
}

export interface IssueRecord {
  repo: string;
  number: number;
  id: number;
  nodeId: string;
  title: string;
  body: string | null;
  user: string;
  state: "open" | "closed";
  /** Label names, in the order they were added. */
  labels: string[];
  /** True when this number belongs to a pull request (they share the issue sequence). */
  isPull: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface CommentRecord {
  repo: string;
  issueNumber: number;
  id: number;
  nodeId: string;
  body: string;
  user: string;
  createdAt: string;
  updatedAt: string;
  /** Every body the comment had, oldest first (the current one last). */
  history: string[];
}

export interface ReactionRecord {
  repo: string;
  issueNumber: number;
  id: number;
  content: string;
  user: string;
  createdAt: string;
}

export interface LabelRecord {
  repo: string;
  id: number;
  nodeId: string;
  name: string;
  color: string;
  description: string | null;
}

export interface PullRecord {
  repo: string;
  number: number;
  id: number;
  nodeId: string;
  title: string;
  body: string | null;
  user: string;
  state: "open" | "closed";
  draft: boolean;
  headRef: string;
  baseRef: string;
  createdAt: string;
  updatedAt: string;
  /** Every request body that created or changed it, plus GraphQL ready-for-review marks. */
  history: Record<string, unknown>[];
}

export interface CheckRunOutput {
  title: string | null;
  summary: string | null;
  text: string | null;
  annotationsCount: number;
}

export interface CheckRunRecord {
  repo: string;
  id: number;
  nodeId: string;
  name: string;
  headSha: string;
  status: "queued" | "in_progress" | "completed" | "waiting" | "requested" | "pending";
  conclusion: string | null;
  startedAt: string | null;
  completedAt: string | null;
  externalId: string | null;
  detailsUrl: string | null;
  output: CheckRunOutput;
  actions: { label: string; description: string; identifier: string }[];
  /** The create body and every update body, in order: a check run's full story. */
  history: Record<string, unknown>[];
  /** Another App's run (CI): its suite and its App; absent for the App's own runs. */
  suiteId?: number;
  app?: Record<string, unknown>;
  /** Its annotations as GitHub lists them (another App's runs). */
  annotations?: CheckAnnotationRecord[];
}

/** One annotation of another App's check run. */
export interface CheckAnnotationRecord {
  path: string;
  startLine: number;
  endLine: number;
  level: "notice" | "warning" | "failure";
  title: string | null;
  message: string;
}

/** A review submitted on a pull request. */
export interface ReviewRecord {
  repo: string;
  pullNumber: number;
  id: number;
  nodeId: string;
  user: string;
  body: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED";
  commitId: string;
  submittedAt: string;
}

/** A review comment (an inline comment on a line of the diff), or a reply in its thread. */
export interface ReviewCommentRecord {
  repo: string;
  pullNumber: number;
  id: number;
  nodeId: string;
  reviewId: number;
  user: string;
  body: string;
  path: string;
  /** The line it is on; null when that line is no longer in the diff (outdated). */
  line: number | null;
  originalLine: number;
  commitId: string;
  /** The comment that starts the thread this one replies to. */
  inReplyTo?: number;
  createdAt: string;
}

/** Another App's check suite on a commit (GitHub Actions or any CI). */
export interface CheckSuiteRecord {
  repo: string;
  id: number;
  nodeId: string;
  app: Record<string, unknown>;
  headSha: string;
  headBranch: string | null;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  createdAt: string;
}

/** An Actions job's log: served by a redirect to a download (GitHub's way) or, with `redirect: false`, as the text itself. */
export interface JobLogRecord {
  repo: string;
  jobId: number;
  text: Buffer;
  redirect: boolean;
  /** The unguessable part of its download URL. */
  key: string;
}

/** One HTTP request the fake answered (API and git alike). */
export interface RecordedRequest {
  method: string;
  path: string;
  query: string;
  /** Parsed JSON body for API calls; undefined for git traffic and empty bodies. */
  body: unknown;
  status: number;
  /** The route template that served it, when one did ("git" for smart HTTP). */
  route?: string;
  /** The request's Content-Encoding, when it had one (git gzips large fetch negotiations). */
  contentEncoding?: string;
  /** The request's X-GitHub-Delivery, when it had one (an App's requests made for a webhook delivery carry its id). */
  delivery?: string;
  at: string;
}

/** A request a strict fake refuses: the test that caused it must fail. */
export interface UnexpectedRequest {
  method: string;
  path: string;
  status: number;
  reason: string;
  body: unknown;
}

/** Everything the fake remembers, readable by tests. */
export class FakeState {
  readonly repos: RepoRecord[] = [];
  readonly issues: IssueRecord[] = [];
  readonly comments: CommentRecord[] = [];
  readonly reactions: ReactionRecord[] = [];
  readonly labels: LabelRecord[] = [];
  readonly pulls: PullRecord[] = [];
  readonly checkRuns: CheckRunRecord[] = [];
  readonly reviews: ReviewRecord[] = [];
  readonly reviewComments: ReviewCommentRecord[] = [];
  readonly checkSuites: CheckSuiteRecord[] = [];
  readonly jobLogs: JobLogRecord[] = [];
  readonly requests: RecordedRequest[] = [];
  readonly unexpected: UnexpectedRequest[] = [];
  private idCounter = 1000;

  /** A fresh id, unique across every kind of object (GitHub's ids are too, in practice). */
  nextId(): number {
    this.idCounter += 1;
    return this.idCounter;
  }

  repo(owner: string, name: string): RepoRecord | undefined {
    const fullName = `${owner}/${name}`.toLowerCase();
    return this.repos.find((repo) => repo.fullName.toLowerCase() === fullName);
  }

  issue(repo: RepoRecord, number: number): IssueRecord | undefined {
    return this.issues.find((issue) => issue.repo === repo.fullName && issue.number === number);
  }

  pull(repo: RepoRecord, number: number): PullRecord | undefined {
    return this.pulls.find((pull) => pull.repo === repo.fullName && pull.number === number);
  }

  /** The next issue or pull request number of a repository. */
  nextNumber(repo: RepoRecord): number {
    return this.issues.filter((issue) => issue.repo === repo.fullName).reduce((max, issue) => Math.max(max, issue.number), 0) + 1;
  }

  label(repo: RepoRecord, name: string): LabelRecord | undefined {
    return this.labels.find((label) => label.repo === repo.fullName && label.name.toLowerCase() === name.toLowerCase());
  }

  /** Test helper: an issue (or a pull request's issue) by repository and number. */
  findIssue(owner: string, name: string, number: number): IssueRecord | undefined {
    const repo = this.repo(owner, name);
    return repo && this.issue(repo, number);
  }

  /** Test helper: a pull request by number, or by its head branch when given a string. */
  findPull(owner: string, name: string, numberOrBranch: number | string): PullRecord | undefined {
    const repo = this.repo(owner, name);
    if (!repo) return undefined;
    if (typeof numberOrBranch === "number") return this.pull(repo, numberOrBranch);
    return this.pulls.filter((pull) => pull.repo === repo.fullName && pull.headRef === numberOrBranch).at(-1);
  }

  /** Test helper: the comments on an issue or pull request, oldest first. */
  commentsOn(owner: string, name: string, number: number): CommentRecord[] {
    const fullName = this.repo(owner, name)?.fullName;
    return this.comments.filter((comment) => comment.repo === fullName && comment.issueNumber === number);
  }

  /** Test helper: the label names on an issue or pull request. */
  labelsOn(owner: string, name: string, number: number): string[] {
    return [...(this.findIssue(owner, name, number)?.labels ?? [])];
  }

  /** Test helper: a repository's check runs, oldest first, optionally by name and head commit. */
  checkRunsOf(owner: string, name: string, filter: { name?: string; headSha?: string } = {}): CheckRunRecord[] {
    const fullName = this.repo(owner, name)?.fullName;
    return this.checkRuns.filter(
      (run) =>
        run.repo === fullName && (filter.name === undefined || run.name === filter.name) && (filter.headSha === undefined || run.headSha === filter.headSha),
    );
  }

  /** Test helper: the review comments of a pull request (replies included), oldest first. */
  reviewCommentsOn(owner: string, name: string, pullNumber: number): ReviewCommentRecord[] {
    const fullName = this.repo(owner, name)?.fullName;
    return this.reviewComments.filter((comment) => comment.repo === fullName && comment.pullNumber === pullNumber);
  }

  /** The repository's label of that name, created (like GitHub does when a label is added) when missing. */
  ensureLabel(repo: RepoRecord, name: string): LabelRecord {
    const existing = this.label(repo, name);
    if (existing) return existing;
    const id = this.nextId();
    const created: LabelRecord = { repo: repo.fullName, id, nodeId: nodeId("LA", id), name, color: "ededed", description: null };
    this.labels.push(created);
    return created;
  }
}

/** A node id in GitHub's newer style (`I_kwDO…`), stable per kind and id. */
export function nodeId(prefix: string, id: number): string {
  return `${prefix}_kwDO${Buffer.from(`fake:${prefix}:${id}`).toString("base64url")}`;
}

/** Now, as GitHub writes timestamps (seconds precision, Z). */
export function timestamp(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}
