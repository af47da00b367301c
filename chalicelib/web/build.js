// A build: its jobs with their status, duration, live log, artifacts, and the tests and messages they reported;
// cancel, re-run and deploy.

import { apiUrl, call, getJson, sendJson } from "./api.js";
import { duration, h, isFinal, messageBox, route, statusBadge, submitting } from "./dom.js";
import { LogFollower } from "./log.js";
import { JobReports } from "./reports.js";

const REPORTS_EVERY_MS = 5000;  // a running job's tests and messages are read again this often
const EXECUTORS = { runner: "runner", codebuild: "AWS CodeBuild", agent: "build agent" };

export async function buildView(page, accountName, slug, version) {
  const project = `/projects/${encodeURIComponent(accountName)}/${encodeURIComponent(slug)}`;
  const path = `${project}/build/${encodeURIComponent(version)}`;
  let { build } = await getJson(path);
  const message = messageBox();
  const status = h("span", { id: "build-status" });
  const actions = h("div", { class: "actions", id: "build-actions" });
  const jobs = h("div", { id: "jobs" });
  const deploy = h("div", { id: "deploy" });
  const followers = new Map();
  const jobParts = new Map();

  const act = async (label, work) => {
    message.clear();
    try {
      await work();
    } catch (error) {
      message.error(`${label}: ${error.message}`);
    }
  };
  const renderActions = () => {
    const buttons = [];
    if (["queued", "running"].includes(build.status)) {
      buttons.push(h("button", { type: "button", class: "danger", id: "cancel-build", onclick: () => act("Cancel",
        async () => { await call("DELETE", `/builds/${encodeURIComponent(accountName)}/${encodeURIComponent(slug)}/${encodeURIComponent(version)}`); await refresh(); }) }, "Cancel build"));
    }
    if (isFinal(build.status)) {
      buttons.push(h("button", { type: "button", id: "rerun-build", onclick: () => act("Re-run", async () => {
        const again = await sendJson("PUT", "/builds", { buildId: build.buildId, reRunIncomplete: false });
        location.hash = route("projects", accountName, slug, "build", again.version);
      }) }, "Re-run build"));
    }
    if (["failed", "cancelled"].includes(build.status)) {
      buttons.push(h("button", { type: "button", id: "rerun-incomplete", onclick: () => act("Re-run", async () => {
        await sendJson("PUT", "/builds", { buildId: build.buildId, reRunIncomplete: true });
        await refresh();
      }) }, "Re-run incomplete jobs"));
    }
    actions.replaceChildren(...buttons);
  };
  const renderJob = (job) => {
    let parts = jobParts.get(job.jobId);
    if (!parts) {
      const follower = new LogFollower(job.jobId);
      followers.set(job.jobId, follower);
      parts = {
        status: h("span"), duration: h("span", { class: "duration" }), artifacts: h("ul", { class: "artifacts" }),
        executor: h("span", { class: "executor" }), waiting: h("p", { class: "waiting" }),
        artifactsShown: false, follower, lastStatus: null, reports: new JobReports(job.jobId), reportsRead: 0,
      };
      jobParts.set(job.jobId, parts);
      jobs.append(h("article", { class: "job", "data-job": job.jobId },
        h("header", {}, h("span", { class: "name" }, job.name || "Job"), parts.executor, parts.status, parts.duration),
        parts.waiting, follower.element, parts.artifacts, parts.reports.element));
    }
    if (parts.lastStatus !== job.status) parts.status.replaceChildren(statusBadge(job.status));
    // Placed when queued (or when dispatched, for older builds); a queued job says what it waits for.
    const where = job.executor ? `runs on: ${EXECUTORS[job.executor] || job.executor}` : "";
    parts.executor.textContent = job.agentName ? `${where} ${job.agentName}` : where;
    parts.waiting.textContent = job.message || "";
    parts.duration.textContent = duration(job.started, job.finished);
    parts.job = job;
    return parts;
  };
  const showArtifacts = async (parts) => {
    parts.artifactsShown = true;
    const jobId = encodeURIComponent(parts.job.jobId);
    const artifacts = await getJson(`/buildjobs/${jobId}/artifacts`);
    parts.artifacts.replaceChildren(...artifacts.map((artifact) => {
      const file = artifact.fileName.split("/").map(encodeURIComponent).join("/");
      return h("li", {}, h("a", { href: apiUrl(`/buildjobs/${jobId}/artifacts/${file}`), download: "" },
        artifact.name || artifact.fileName), ` (${artifact.size} bytes)`);
    }));
  };
  const readReports = async (parts, finished) => {
    const job = parts.job;
    if (job.status === "queued") return;
    const due = finished ? parts.lastStatus !== job.status : Date.now() - parts.reportsRead >= REPORTS_EVERY_MS;
    if (!due) return;
    parts.reportsRead = Date.now();
    await parts.reports.load();
  };
  const renderDeploy = async () => {
    if (build.status !== "success" || deploy.childElementCount) return;
    const environments = await getJson("/environments");
    const deployMessage = messageBox();
    const form = h("form", { id: "deploy-build" },
      h("label", {}, "Environment", h("select", { name: "environment", required: true },
        environments.map((environment) => h("option", { value: environment.name }, environment.name)))),
      h("button", { class: "primary", type: "submit", disabled: !environments.length }, "Deploy"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      submitting(form, deployMessage, async () => {
        const deployment = await sendJson("POST", "/deployments", {
          environmentName: new FormData(form).get("environment"), accountName, projectSlug: slug,
          buildVersion: version,
        });
        location.hash = route("deployments", deployment.deploymentId);
      });
    });
    deploy.append(h("h2", {}, "Deploy this build"), form, deployMessage.element);
  };
  const render = async () => {
    status.replaceChildren(statusBadge(build.status));
    renderActions();
    for (const job of build.jobs) {
      const parts = renderJob(job);
      const finished = isFinal(job.status);
      if (job.status !== "queued" && (!finished || parts.lastStatus !== job.status)) await parts.follower.poll();
      if (finished && !parts.artifactsShown) await showArtifacts(parts);
      await readReports(parts, finished);
      parts.lastStatus = job.status;
    }
    await renderDeploy();
  };
  const refresh = async () => {
    ({ build } = await getJson(path));
    await render();
  };

  await render();
  page.every(1000, async () => {
    if (!isFinal(build.status) || build.jobs.some((job) => !isFinal(job.status))) await refresh();
  });
  return h("div", {},
    h("p", { class: "sub" }, h("a", { href: route("projects", accountName, slug) }, slug)),
    h("h1", {}, `Build ${build.version} `, status),
    h("p", { class: "sub" }, `${build.branch} · ${build.commitId.slice(0, 8)} · ${build.message}`),
    actions, message.element, jobs, deploy);
}
