// One job of a build, as AppVeyor's build page shows it: its status (and whether its failure was allowed), where
// it runs, its duration, why it waits or could not run, and its Console, Messages, Tests and Artifacts tabs.

import { apiUrl, call } from "./api.js";
import { duration, h, isFinal, messageBox, statusBadge } from "./dom.js";
import { LogFollower } from "./log.js";
import { JobReports } from "./reports.js";

const REPORTS_EVERY_MS = 5000;  // a running job's tests and messages are read again this often
const EXECUTORS = { runner: "runner", codebuild: "AWS CodeBuild", agent: "build agent" };
const TABS = [["console", "Console"], ["messages", "Messages"], ["tests", "Tests"], ["artifacts", "Artifacts"]];

/** Where a job runs, once placed: "runner", "build agent office-1", ...; nothing for a job no executor took. */
export function runsOn(job) {
  const where = job.executor ? EXECUTORS[job.executor] || job.executor : "";
  return job.agentName ? `${where} ${job.agentName}` : where;
}

/** A job's status badge, and beside a failure its matrix allowed, "allowed to fail". */
export function jobStatus(job) {
  const allowed = job.allowFailure && job.status === "failed";
  const badge = statusBadge(job.status);
  return allowed ? [badge, " ", h("span", { class: "allowed", "data-allowed-failure": "" }, "allowed to fail")] : [badge];
}

export class JobPane {
  constructor(job) {
    this.jobId = job.jobId;
    this.follower = new LogFollower(job.jobId);
    this.reports = new JobReports(job.jobId);
    this.artifacts = h("ul", { class: "artifacts" });
    this.artifactMessage = messageBox();
    this.status = h("span", { class: "job-status" });
    this.duration = h("span", { class: "duration" });
    this.executor = h("span", { class: "executor" });
    this.waiting = h("p", { class: "waiting" });
    this.tabs = new Map();
    const list = h("div", { class: "tabs", role: "tablist", "aria-label": "Job" });
    const panels = [];
    for (const [name, label] of TABS) {
      const button = h("button", { type: "button", role: "tab", id: `tab-${name}`, "data-tab": name,
        "aria-controls": `panel-${name}`, onclick: () => this.select(name) }, label);
      const panel = h("div", { role: "tabpanel", id: `panel-${name}`, "data-panel": name, "aria-labelledby": `tab-${name}` });
      list.append(button);
      panels.push(panel);
      this.tabs.set(name, { button, panel, label });
    }
    this.tabs.get("console").panel.append(this.follower.element);
    this.tabs.get("messages").panel.append(this.reports.messages);
    this.tabs.get("tests").panel.append(this.reports.tests);
    this.tabs.get("artifacts").panel.append(this.artifacts, this.artifactMessage.element);
    list.addEventListener("keydown", (event) => this.arrow(event));
    this.element = h("article", { class: "job", "data-job": job.jobId },
      h("header", {}, h("span", { class: "name" }, job.name || "Job"), this.executor, this.status, this.duration),
      this.waiting, list, panels);
    this.select("console");
    this.seen = null;  // the job as last shown
    this.reportsRead = 0;
    this.artifactsRead = false;
  }

  select(name) {
    for (const [tab, { button, panel }] of this.tabs) {
      const on = tab === name;
      button.setAttribute("aria-selected", String(on));
      button.tabIndex = on ? 0 : -1;
      panel.hidden = !on;
    }
    if (name === "console") this.follower.keepAtEnd();
  }

  arrow(event) {
    const names = TABS.map(([name]) => name);
    const at = names.findIndex((name) => this.tabs.get(name).button.getAttribute("aria-selected") === "true");
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (!step) return;
    const next = names[(at + step + names.length) % names.length];
    this.select(next);
    this.tabs.get(next).button.focus();
  }

  /** Show the job as the build now reports it: a new attempt (a re-run) starts its log and reports anew. */
  async update(job) {
    const seen = this.seen;
    const rerun = seen && ((isFinal(seen.status) && !isFinal(job.status))
      || (seen.started && job.started && seen.started !== job.started));
    if (rerun) {
      this.follower.reset();
      this.follower.follow(true);
      this.reports.showTests([]);
      this.reports.showMessages([]);
      this.artifacts.replaceChildren();
      this.artifactMessage.clear();
      this.artifactsRead = false;
    }
    const changed = !seen || rerun || seen.status !== job.status;
    if (changed) this.status.replaceChildren(...jobStatus(job));
    this.status.classList.toggle("allowed-failure", Boolean(job.allowFailure) && job.status === "failed");
    const where = runsOn(job);
    this.executor.textContent = where ? `runs on: ${where}` : "";
    this.waiting.textContent = job.message || "";  // what it waits for, or why it failed
    this.waiting.classList.toggle("refused", job.status === "failed");
    this.duration.textContent = duration(job.started, job.finished);
    this.label("messages", job.messagesCount);
    this.label("tests", job.testsCount);
    this.label("artifacts", job.artifactsCount);
    this.seen = job;
    const finished = isFinal(job.status);
    if (!seen) this.follower.follow(!finished);  // a finished log opens at its top, a running one at its end
    if (job.status !== "queued" && (!finished || changed)) await this.follower.poll();
    if (finished && !this.artifactsRead) await this.showArtifacts();
    if (job.status !== "queued" && (finished ? changed : Date.now() - this.reportsRead >= REPORTS_EVERY_MS)) {
      this.reportsRead = Date.now();
      await this.reports.load();
    }
  }

  label(name, count) {
    const { button, label } = this.tabs.get(name);
    button.textContent = count ? `${label} (${count})` : label;
  }

  async showArtifacts() {
    this.artifactsRead = true;
    const jobId = encodeURIComponent(this.jobId);
    const artifacts = await (await call("GET", `/buildjobs/${jobId}/artifacts`)).json();
    if (!artifacts.length) {
      this.artifacts.replaceChildren(h("li", { class: "empty" }, "No artifacts."));
      return;
    }
    this.artifacts.replaceChildren(...artifacts.map((artifact) => {
      const file = artifact.fileName.split("/").map(encodeURIComponent).join("/");
      const path = `/buildjobs/${jobId}/artifacts/${file}`;
      const name = artifact.name || artifact.fileName;
      return h("li", {}, h("a", { href: apiUrl(path), download: "", onclick: (event) => {
        event.preventDefault();
        this.download(path, name);
      } }, name), ` (${artifact.size} bytes)`);
    }));
  }

  /** Download an artifact with the page's credentials (its cookie, or the API key as a header, which a plain
   * link cannot send): the service answers the file's short-lived URL, and the browser saves what it serves. */
  async download(path, name) {
    this.artifactMessage.clear();
    try {
      const { url } = await (await call("GET", `${path}?redirect=false`)).json();
      const link = h("a", { href: url, download: "", hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      this.artifactMessage.info(`Downloading ${name}…`);
    } catch (error) {
      this.artifactMessage.error(`${name} could not be downloaded: ${error.message}`);
    }
  }
}
