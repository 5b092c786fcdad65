/**
 * The status page: server-rendered HTML with no script and no build step, refreshed by the
 * browser every few seconds. Pure: a report in, a page out. Every value is escaped; issue
 * titles and log lines are repository text.
 */
import type { DoorStatus } from "../github/door/index.js";
import type { RunStatus, StatusReport } from "./report.js";
import { LIVE_TOOL_CALLS, TOOL_SUMMARY_CHARS } from "./tool-calls.js";
import { storyKey } from "../story-key/index.js";

/** Seconds between the page's refreshes. */
export const REFRESH_SECONDS = 5;

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1f2328;max-width:72rem}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem;border-bottom:1px solid #d0d7de;padding-bottom:.3rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #eaeef2;vertical-align:top}
th{color:#59636e;font-weight:600}.running{color:#9a6700}.completed{color:#1a7f37}.blocked{color:#cf222e}.queued{color:#59636e}
pre{background:#f6f8fa;padding:.8rem;overflow:auto;max-height:24rem;white-space:pre-wrap}.empty{color:#59636e}code{font-size:.9em}`;

export interface PageOptions {
  /** Where links to GitHub point: `https://github.com`, or the Enterprise Server's address. */
  webBase: string;
}

function link(href: string, text: string): string {
  return `<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>`;
}

function table(headers: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${escapeHtml(empty)}</p>`;
  return `<table><thead><tr>${headers.map((header) => `<th>${escapeHtml(header)}</th>`).join("")}</tr></thead><tbody>${rows
    .map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join("")}</tr>`)
    .join("")}</tbody></table>`;
}

function jobsSection(report: StatusReport, options: PageOptions): string {
  const rows = report.jobs.map((view) => {
    const { repository, issue } = view.job;
    const issueUrl = `${options.webBase}/${repository.owner}/${repository.name}/issues/${issue.number}`;
    const pull =
      view.job.pullNumber !== undefined
        ? ` · ${link(`${options.webBase}/${repository.owner}/${repository.name}/pull/${view.job.pullNumber}`, `PR #${view.job.pullNumber}`)}`
        : "";
    return [
      `<span class="${view.state}">${escapeHtml(view.state)}</span>`,
      `${link(issueUrl, storyKey(repository.owner, repository.name, issue.number))}${pull}`,
      escapeHtml(issue.title),
      escapeHtml(view.job.kind),
      escapeHtml(view.startedAt ?? view.job.enqueuedAt),
      view.interruptions > 0 ? escapeHtml(`${view.interruptions} interruption(s)`) : "",
    ];
  });
  return `<h2>Queue (${report.jobs.length})</h2>${table(["State", "Story", "Title", "Kind", "Since", ""], rows, "Nothing queued or running.")}`;
}

function runRow(run: RunStatus, shared: boolean): string[] {
  const where =
    run.outcome === "running" ? `${run.stage ?? "starting"} · attempt ${run.attempt}/${run.maxAttempts}` : `attempt ${run.attempt}/${run.maxAttempts}`;
  const why = run.failureClass ? `<code>${escapeHtml(run.failureClass)}</code>${run.detail ? ` ${escapeHtml(run.detail.slice(0, 300))}` : ""}` : "";
  const tasks =
    run.tasks.length > 0
      ? `<br>${run.tasks.map((task) => `${escapeHtml(task.id)} (wave ${task.wave}): <span class="${escapeHtml(task.state)}">${escapeHtml(task.state)}</span>`).join(", ")}`
      : "";
  const worker = shared ? [`<code>${escapeHtml(run.worker ?? "this App")}</code>`] : [];
  return [
    `<span class="${run.outcome}">${escapeHtml(run.outcome)}</span>`,
    escapeHtml(run.story),
    `${escapeHtml(run.title)}${tasks}`,
    escapeHtml(where),
    why,
    escapeHtml(run.updatedAt),
    ...worker,
  ];
}

/** A running seat's latest tool calls, newest last (already redacted and bounded by the report; escaped here). */
function toolCallsOf(run: RunStatus): string {
  const calls = (run.liveTools?.calls ?? []).slice(-LIVE_TOOL_CALLS);
  const items = calls
    .map((call) => `<li><code>${escapeHtml(call.tool.slice(0, 80))}</code> ${escapeHtml(call.summary.slice(0, TOOL_SUMMARY_CHARS))}</li>`)
    .join("");
  return `<h3>${escapeHtml(run.story)}: ${escapeHtml(run.title)}${run.worker ? ` on <code>${escapeHtml(run.worker)}</code>` : ""} — <code>${escapeHtml(run.liveTools?.file ?? "")}</code></h3><ol class="tools">${items}</ol>`;
}

function runsSection(report: StatusReport): string {
  const running = report.runs.filter((run) => run.outcome === "running");
  const ended = report.runs.filter((run) => run.outcome !== "running");
  // On Redis each worker's runs come from its report: the table says whose they are.
  const shared = report.workers !== undefined;
  const headers = ["State", "Story", "Title", "Stage", "Why", "Updated", ...(shared ? ["Worker"] : [])];
  const row = (run: RunStatus): string[] => runRow(run, shared);
  const tails = running
    .filter((run) => run.liveTail)
    .map(
      (run) =>
        `<h3>${escapeHtml(run.story)}: ${escapeHtml(run.title)}${run.worker ? ` on <code>${escapeHtml(run.worker)}</code>` : ""} — <code>${escapeHtml(run.liveTail?.file ?? "")}</code></h3><pre>${escapeHtml(run.liveTail?.text ?? "")}</pre>`,
    )
    .join("");
  const tools = running
    .filter((run) => run.liveTools)
    .map(toolCallsOf)
    .join("");
  return (
    `<h2>Running (${running.length})</h2>${table(headers, running.map(row), "No story is running.")}` +
    (tools ? `<h2>Latest tool calls</h2>${tools}` : "") +
    (tails ? `<h2>Live log</h2>${tails}` : "") +
    `<h2>Recent outcomes (${ended.length})</h2>${table(headers, ended.map(row), "No story has ended yet.")}`
  );
}

/** With Redis: each worker's last report (its outbox and quarantine are on its own disk). */
function workersSection(report: StatusReport): string {
  if (!report.workers) return "";
  const rows = report.workers.map((worker) => [
    `<code>${escapeHtml(worker.worker)}</code>`,
    `<span class="${worker.live ? "completed" : "blocked"}">${worker.live ? "live" : "not live"}</span>`,
    String(worker.running),
    escapeHtml(worker.home),
    escapeHtml(worker.at),
    worker.omitted.quarantined + worker.omitted.undelivered > 0
      ? escapeHtml(`${worker.omitted.quarantined + worker.omitted.undelivered} entries not shown`)
      : "",
  ]);
  return `<h2>Workers (${report.workers.length})</h2>${table(["Worker", "State", "Running", "Home", "Reported", ""], rows, "No worker has reported.")}`;
}

/** What the sweeps say: running, waiting, to follow the shedding, or the last one's result. */
function sweepText(door: DoorStatus): string {
  const sweeps = door.redelivery;
  if (!sweeps) return "off: shed deliveries are not asked for again.";
  const now = sweeps.running
    ? sweeps.queued
      ? "a sweep is running, and another follows it"
      : "a sweep is running"
    : door.shed.shedding
      ? "a sweep follows once shedding stops"
      : "no sweep is running";
  const last = sweeps.last;
  if (!last) return `${now}; none has ended yet.`;
  const result = last.complete
    ? `${last.listed} deliveries listed, ${last.asked} asked for again, ${last.failed} refused by GitHub`
    : "the deliveries could not be listed";
  return `${now}; the last ended ${last.endedAt}: ${result}.`;
}

/** The webhook door: deliveries shed (503) and the redelivery sweeps; nothing without a door. */
function doorSection(door: DoorStatus | undefined): string {
  if (!door) return "";
  const { shed } = door;
  const state = shed.shedding ? `<span class="blocked">shedding now</span>` : `<span class="completed">not shedding</span>`;
  const ids =
    shed.recentIds.length === 0
      ? `<p class="empty">No delivery was shed.</p>`
      : `<p>Newest shed delivery ids, newest first (${shed.recentIds.length} of ${shed.total}):</p><pre>${shed.recentIds.map(escapeHtml).join("\n")}</pre>`;
  return `<h2>Webhook door (${shed.total} shed)</h2><p>${state}. Redelivery: ${escapeHtml(sweepText(door))}</p>${ids}`;
}

/** The whole page. */
export function renderStatusPage(report: StatusReport, options: PageOptions): string {
  const shared = report.workers !== undefined;
  const where = (worker: string | undefined): string[] => (shared ? [`<code>${escapeHtml(worker ?? "this App")}</code>`] : []);
  const quarantined = table(
    ["Job", "Story", ...(shared ? ["Worker", "Why"] : [])],
    report.quarantined.map((entry) => [
      `${entry.inRedis ? "Redis " : ""}<code>${escapeHtml(entry.file)}</code>`,
      escapeHtml(entry.story ?? ""),
      ...where(entry.worker),
      ...(shared ? [escapeHtml((entry.reason ?? "").slice(0, 500))] : []),
    ]),
    "No job was set aside.",
  );
  const undelivered = table(
    ["Story", "Write", "State", "Attempts", "Next", "Last error", ...(shared ? ["Worker"] : [])],
    report.undelivered.map((entry) => [
      escapeHtml(entry.story),
      escapeHtml(`${entry.kind} ${entry.slot}`),
      escapeHtml(entry.state),
      String(entry.attempts),
      escapeHtml(entry.nextAt ?? ""),
      escapeHtml(entry.lastError ?? ""),
      ...where(entry.worker),
    ]),
    "Every GitHub write was delivered.",
  );
  const reporting = table(
    ["Story", "Writes waiting", ...(shared ? ["Worker"] : [])],
    report.reporting.map((story) => [escapeHtml(story.story), String(story.writes), ...where(story.worker)]),
    "No story is waiting for its end reports.",
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="${REFRESH_SECONDS}">
<title>story-harness status</title><style>${STYLE}</style></head>
<body><h1>story-harness</h1><p class="empty">Generated ${escapeHtml(report.generatedAt)}; refreshes every ${REFRESH_SECONDS} s.</p>
${jobsSection(report, options)}
${workersSection(report)}
${doorSection(report.door)}
${runsSection(report)}
<h2>Reporting (${report.reporting.length}): job done, end reports waiting in the outbox</h2>${reporting}
<h2>Undelivered GitHub writes (${report.undelivered.length})</h2>${undelivered}
<h2>Quarantined jobs (${report.quarantined.length}${report.quarantinedNotShown ? ` shown, ${report.quarantinedNotShown} more` : ""})</h2>${quarantined}
</body></html>
`;
}
