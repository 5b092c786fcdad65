import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appKeyForProcess, generateAppKey, TokenStore, type IssuedToken } from "./auth.js";
import { FailureWindows, type FailureWindow, type FailureWindowSpec } from "./failures.js";
import { RequestGates, type RequestGate, type RequestGateSpec } from "./gates.js";
import { GIT_TOKEN_USER } from "./git-http.js";
import type { FakeContext } from "./http.js";
import { branchHead, createBareRepository, type RepositorySpec } from "./repos.js";
import { addComment, INSTALLATION_PERMISSIONS } from "./routes/index.js";
import { handle } from "./server.js";
import { addCheckSuite, submitReview, type ReviewSpec, type SuiteSpec } from "./review-control.js";
import { HookDeliveries, type HookDeliveryRecord } from "./hook.js";
import { repoJson, userJson } from "./shapes.js";
import {
  FakeState,
  nodeId,
  timestamp,
  type CheckRunRecord,
  type CheckSuiteRecord,
  type ReviewCommentRecord,
  type ReviewRecord,
  type CommentRecord,
  type IssueRecord,
  type RepoRecord,
  type RepoRole,
  type UnexpectedRequest,
} from "./state.js";

/** What `startFakeGitHub` can be told; every field has a default. */
export interface FakeGitHubOptions {
  appId?: number;
  appSlug?: string;
  installationId?: number;
  /** More installations of the App (ids), answered like the first one: for fairness across installations. */
  moreInstallations?: number[];
  /** The account the App is installed on. */
  account?: string;
  webhookSecret?: string;
  /**
   * Check every successful JSON response against GitHub's response schema and record a mismatch
   * as unexpected (a bug of the fake). Off by default: each response schema costs a compile.
   */
  validateResponses?: boolean;
  /** Generate a key pair for this fake alone instead of the one shared by fakes in this process. */
  freshKey?: boolean;
  /**
   * Where it listens and the host name its URLs carry (default 127.0.0.1 for both): the image test
   * serves containers, which reach the host by a name of their own (Podman's host.containers.internal).
   */
  listen?: { address: string; advertisedHost: string };
}

/** A repository the fake serves. */
export interface AddedRepository {
  id: number;
  nodeId: string;
  fullName: string;
  /** `http://127.0.0.1:<port>/<owner>/<name>.git` */
  cloneUrl: string;
  bareDir: string;
  defaultBranch: string;
}

/** Thrown by {@link FakeGitHub.assertNoUnexpectedRequests}; lists every refused request. */
export class UnexpectedRequestsError extends Error {
  readonly failureClass = "fake-github-unexpected-requests";
  constructor(readonly requests: UnexpectedRequest[]) {
    super(
      `The fake GitHub got ${requests.length} unexpected request(s):\n${requests.map((r) => `  ${r.method} ${r.path} → ${r.status}: ${r.reason}`).join("\n")}`,
    );
    this.name = "UnexpectedRequestsError";
  }
}

/** A running fake GitHub Enterprise Server on loopback, with its control API for tests. */
export class FakeGitHub {
  /** `http://127.0.0.1:<port>` (git, html_url). */
  readonly url: string;
  /** `<url>/api/v3`: what Octokit's baseUrl is with GHE_HOST. */
  readonly apiUrl: string;
  /** `127.0.0.1:<port>`: the App's GHE_HOST (with GHE_PROTOCOL=http). */
  readonly host: string;
  readonly state: FakeState;

  private constructor(
    private readonly server: Server,
    private readonly ctx: FakeContext,
    /** The App's private key (PKCS#1 PEM), for the App's PRIVATE_KEY. */
    readonly privateKey: string,
    readonly webhookSecret: string,
  ) {
    this.url = ctx.urls.web;
    this.apiUrl = ctx.urls.api;
    this.host = new URL(ctx.urls.web).host;
    this.state = ctx.state;
  }

  get appId(): number {
    return this.ctx.appId;
  }
  get appSlug(): string {
    return this.ctx.appSlug;
  }
  /** The login the App's comments, pull requests and reactions are authored by. */
  get botLogin(): string {
    return this.ctx.botLogin;
  }
  get installationId(): number {
    return this.ctx.installationId;
  }
  /** The account the App is installed on (owner of repositories added without another owner). */
  get account(): string {
    return this.ctx.installationAccount;
  }

  /** Starts a fake on 127.0.0.1 with a random port, a fresh App key pair and an empty state. */
  static async start(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
    const reposRoot = await mkdtemp(join(tmpdir(), "fake-github-"));
    const { privateKeyPem, publicKey } = options.freshKey ? generateAppKey() : appKeyForProcess();
    const appSlug = options.appSlug ?? "story-harness";
    const webhookSecret = options.webhookSecret ?? randomBytes(20).toString("hex");
    const ctx: FakeContext = {
      state: new FakeState(),
      urls: { web: "", api: "", bots: new Set([`${appSlug}[bot]`]) },
      tokens: new TokenStore(),
      appId: options.appId ?? 4242,
      appSlug,
      botLogin: `${appSlug}[bot]`,
      installationId: options.installationId ?? 777,
      moreInstallations: options.moreInstallations ?? [],
      installationAccount: options.account ?? "octo-org",
      publicKey,
      reposRoot,
      validateResponses: options.validateResponses ?? false,
      failures: new FailureWindows(),
      gates: new RequestGates(),
      hook: new HookDeliveries(webhookSecret),
      appJson: () => ({
        id: ctx.appId,
        slug: appSlug,
        node_id: nodeId("A", ctx.appId),
        client_id: `Iv1.${ctx.appId}`,
        name: appSlug,
        owner: userJson(ctx.urls, ctx.installationAccount),
        description: "",
        external_url: ctx.urls.web,
        html_url: `${ctx.urls.web}/apps/${appSlug}`,
        created_at: "2026-01-01T00:00:00Z",
        updated_at: "2026-01-01T00:00:00Z",
        permissions: INSTALLATION_PERMISSIONS,
        events: ["issues", "issue_comment", "check_run", "check_suite", "pull_request_review"],
        installations_count: 1,
      }),
    };
    const server = createServer((request, response) => {
      void handle(ctx, request, response);
    });
    // Only the client closes an idle connection. With a server timeout (Node's 5 s) a client on a
    // loaded machine can send on a socket the server is closing at that moment, and Octokit turns
    // the reset into a status 500 the fake never answered. close() drops every connection.
    server.keepAliveTimeout = 0;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, options.listen?.address ?? "127.0.0.1", () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    ctx.urls.web = `http://${options.listen?.advertisedHost ?? "127.0.0.1"}:${port}`;
    ctx.urls.api = `${ctx.urls.web}/api/v3`;
    return new FakeGitHub(server, ctx, privateKeyPem, webhookSecret);
  }

  /** Creates a bare repository served over smart HTTP, its files in one commit on the default branch. */
  async addRepository(spec: RepositorySpec): Promise<AddedRepository> {
    if (this.state.repo(spec.owner, spec.name)) throw new Error(`fake-github: repository ${spec.owner}/${spec.name} exists already`);
    const bareDir = await createBareRepository(this.ctx.reposRoot, spec);
    const id = this.state.nextId();
    const repo: RepoRecord = {
      id,
      nodeId: nodeId("R", id),
      owner: spec.owner,
      name: spec.name,
      fullName: `${spec.owner}/${spec.name}`,
      defaultBranch: spec.defaultBranch ?? "main",
      bareDir,
      createdAt: timestamp(),
      roles: new Map(),
    };
    this.state.repos.push(repo);
    return { id, nodeId: repo.nodeId, fullName: repo.fullName, cloneUrl: `${this.url}/${repo.fullName}.git`, bareDir, defaultBranch: repo.defaultBranch };
  }

  /** Sets a user's role on a repository (the owner is admin, everyone else none, until set). */
  setPermission(owner: string, name: string, login: string, role: RepoRole): void {
    this.repoOrThrow(owner, name).roles.set(login.toLowerCase(), role);
  }

  /** Opens an issue as `user`, optionally already labelled. */
  createIssue(owner: string, name: string, issue: { title: string; body?: string; user: string; labels?: string[] }): IssueRecord {
    const repo = this.repoOrThrow(owner, name);
    const id = this.state.nextId();
    const now = timestamp();
    const record: IssueRecord = {
      repo: repo.fullName,
      number: this.state.nextNumber(repo),
      id,
      nodeId: nodeId("I", id),
      title: issue.title,
      body: issue.body ?? null,
      user: issue.user,
      state: "open",
      labels: [],
      isPull: false,
      createdAt: now,
      updatedAt: now,
    };
    for (const label of issue.labels ?? []) record.labels.push(this.state.ensureLabel(repo, label).name);
    this.state.issues.push(record);
    return record;
  }

  /** Adds a label to an issue or pull request, as a person does before GitHub sends `issues.labeled`. */
  addLabel(owner: string, name: string, number: number, label: string): void {
    const repo = this.repoOrThrow(owner, name);
    const issue = this.state.issue(repo, number);
    if (!issue) throw new Error(`fake-github: ${repo.fullName}#${number} does not exist`);
    const created = this.state.ensureLabel(repo, label);
    if (!issue.labels.includes(created.name)) issue.labels.push(created.name);
  }

  /** Comments on an issue or pull request as `user`, as a person does before GitHub sends `issue_comment.created`. */
  addComment(owner: string, name: string, number: number, comment: { body: string; user: string }): CommentRecord {
    const repo = this.repoOrThrow(owner, name);
    if (!this.state.issue(repo, number)) throw new Error(`fake-github: ${repo.fullName}#${number} does not exist`);
    return addComment(this.ctx, repo, number, comment.body, comment.user);
  }

  /** Submits a review on a pull request as `spec.user`, as a person does before GitHub sends `pull_request_review.submitted`. */
  submitReview(owner: string, name: string, pullNumber: number, spec: ReviewSpec): { review: ReviewRecord; comments: ReviewCommentRecord[] } {
    const repo = this.repoOrThrow(owner, name);
    if (!this.state.pull(repo, pullNumber)) throw new Error(`fake-github: ${repo.fullName} has no pull request #${pullNumber}`);
    return submitReview(this.ctx, repo, pullNumber, spec);
  }

  /** Records another App's completed check suite (CI) with its runs and job logs, as before GitHub sends `check_suite.completed`. */
  addCheckSuite(owner: string, name: string, spec: SuiteSpec): { suite: CheckSuiteRecord; runs: CheckRunRecord[] } {
    return addCheckSuite(this.ctx, this.repoOrThrow(owner, name), spec);
  }

  /**
   * Opens a window of injected failures: until `close()`, requests matching `spec` get its
   * failure (403 with `retry-after`, 502, or a push refused by a pre-receive hook).
   */
  injectFailure(spec: FailureWindowSpec): FailureWindow {
    return this.ctx.failures.open(spec);
  }

  /**
   * Shuts a gate: until `open()`, requests matching `spec` wait unanswered (GitHub slow to take
   * them), then are served as usual, in the order they came.
   */
  holdRequests(spec: RequestGateSpec): RequestGate {
    return this.ctx.gates.shut(spec);
  }

  /** Every installation token handed out so far (to check none leaks anywhere). */
  issuedTokens(): IssuedToken[] {
    return this.ctx.tokens.all();
  }

  /** Hands a test its own installation token (for cloning to inspect the result). */
  mintToken(): string {
    return this.ctx.tokens.issue(this.ctx.installationId, INSTALLATION_PERMISSIONS).token;
  }

  /** The next installation token the fake issues will be `value` (say, one no redaction pattern knows). */
  issueNextTokenAs(value: string): void {
    this.ctx.tokens.issueNextAs(value);
  }

  /** Sets the App's webhook URL: where {@link sendWebhook} and redeliveries POST. */
  setWebhookUrl(url: string): void {
    this.ctx.hook.url = url;
  }

  /**
   * Sends a webhook delivery to the App as GitHub does (signed, recorded with the status the
   * App answered); resolves once the App answered. GitHub does not retry one that failed.
   */
  sendWebhook(event: string, payload: Record<string, unknown>): Promise<HookDeliveryRecord> {
    return this.ctx.hook.send(event, payload);
  }

  /** Every webhook delivery sent, oldest first (redeliveries included). */
  hookDeliveries(): HookDeliveryRecord[] {
    return [...this.ctx.hook.records];
  }

  /** Resolves once no webhook delivery (or redelivery) is on its way. */
  webhooksIdle(): Promise<void> {
    return this.ctx.hook.idle();
  }

  /** Makes `login` a bot account (another App's bot user): the fake reports it with type `Bot`. */
  addBotAccount(login: string): void {
    (this.ctx.urls.bots as Set<string>).add(login);
  }

  /** Makes a token expire now. */
  expireToken(token: string): void {
    this.ctx.tokens.expire(token);
  }

  /**
   * The environment that makes git authenticate to the fake with `token` without putting it in
   * argv or .git/config (an `http.extraHeader` passed through `GIT_CONFIG_*`).
   */
  gitAuthEnv(token: string): Record<string, string> {
    const basic = Buffer.from(`${GIT_TOKEN_USER}:${token}`).toString("base64");
    return { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "http.extraHeader", GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` };
  }

  /** The head commit of a branch, or null when the branch does not exist. */
  branchHead(owner: string, name: string, branch: string): Promise<string | null> {
    return branchHead(this.repoOrThrow(owner, name).bareDir, branch);
  }

  /** GitHub's JSON for a repository, user or the App, for building webhook payloads. */
  repositoryJson(owner: string, name: string): Record<string, unknown> {
    return repoJson(this.ctx.urls, this.repoOrThrow(owner, name));
  }

  userJson(login: string): Record<string, unknown> {
    return userJson(this.ctx.urls, login);
  }

  appJson(): Record<string, unknown> {
    return this.ctx.appJson();
  }

  /** The requests the fake refused as a correct App would never make them. */
  unexpectedRequests(): UnexpectedRequest[] {
    return [...this.state.unexpected];
  }

  /** Returns the unexpected requests and forgets them: for a test that provokes one on purpose. */
  takeUnexpectedRequests(): UnexpectedRequest[] {
    return this.state.unexpected.splice(0, this.state.unexpected.length);
  }

  /** Throws {@link UnexpectedRequestsError} listing every unexpected request, if there was any. */
  assertNoUnexpectedRequests(): void {
    if (this.state.unexpected.length > 0) throw new UnexpectedRequestsError(this.unexpectedRequests());
  }

  /** Stops the server (dropping open connections) and removes the bare repositories. */
  async close(): Promise<void> {
    this.ctx.gates.openAll();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    await rm(this.ctx.reposRoot, { recursive: true, force: true });
  }

  /** The fake's context, for the webhook payload builders in this folder. */
  get context(): FakeContext {
    return this.ctx;
  }

  private repoOrThrow(owner: string, name: string): RepoRecord {
    const repo = this.state.repo(owner, name);
    if (!repo) throw new Error(`fake-github: no repository ${owner}/${name}; add it with addRepository first`);
    return repo;
  }
}

/** Starts a fake GitHub (see {@link FakeGitHub}). */
export function startFakeGitHub(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
  return FakeGitHub.start(options);
}
