// A build: its jobs as a list (name, status, duration, tests, where each runs), and one job at a time with its
// Console, Messages, Tests and Artifacts (job.js), as AppVeyor's build page shows them; cancel, re-run and deploy.
// A build of one job opens on it; #/projects/{account}/{slug}/build/{version}/job/{jobId} names a job of any.

import { call, getJson, sendJson } from "./api.js";
import { duration, h, isFinal, messageBox, route, statusBadge, submitting } from "./dom.js";
import { JobPane, jobStatus, runsOn } from "./job.js";

function testCounts(job) {
  if (!job.testsCount) return "";
  return `${job.testsCount} · ${job.passedTestsCount} passed · ${job.failedTestsCount} failed`;
}

export async function buildView(page, accountName, slug, version, jobId) {
  const project = `/projects/${encodeURIComponent(accountName)}/${encodeURIComponent(slug)}`;
  const path = `${project}/build/${encodeURIComponent(version)}`;
  let { build } = await getJson(path);
  const shownId = jobId || (build.jobs.length === 1 ? build.jobs[0].jobId : null);
  if (shownId && !build.jobs.some((job) => job.jobId === shownId)) {
    throw new Error(`Build ${version} has no job ${shownId}.`);
  }
  const jobLink = (job) => route("projects", accountName, slug, "build", version, "job", job.jobId);
  const message = messageBox();
  const status = h("span", { id: "build-status" });
  const actions = h("div", { class: "actions", id: "build-actions" });
  const deploy = h("div", { id: "deploy" });
  const rows = new Map();
  const pane = shownId ? new JobPane(build.jobs.find((job) => job.jobId === shownId)) : null;
  const list = shownId ? null : h("tbody");

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
  const renderRow = (job) => {
    let row = rows.get(job.jobId);
    if (!row) {
      row = { status: h("td"), duration: h("td", { class: "number" }), tests: h("td", { class: "wide" }),
        runsOn: h("td", { class: "wide" }), element: null, last: null };
      row.element = h("tr", { "data-job": job.jobId },
        h("td", {}, h("a", { href: jobLink(job) }, job.name || "Job")), row.status, row.duration, row.tests, row.runsOn);
      rows.set(job.jobId, row);
      list.append(row.element);
    }
    const allowed = job.allowFailure && job.status === "failed";
    row.element.className = `status-row ${allowed ? "allowed-failure" : job.status}`;
    if (row.last !== job.status) row.status.replaceChildren(...jobStatus(job));
    row.last = job.status;
    row.duration.textContent = duration(job.started, job.finished);
    row.tests.textContent = testCounts(job);
    row.runsOn.textContent = runsOn(job);
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
    if (list) build.jobs.forEach(renderRow);
    if (pane) await pane.update(build.jobs.find((job) => job.jobId === shownId));
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
  const jobs = list
    ? h("table", { class: "table", id: "build-jobs" },
      h("thead", {}, h("tr", {}, h("th", {}, "Job"), h("th", {}, "Status"), h("th", { class: "number" }, "Duration"),
        h("th", { class: "wide" }, "Tests"), h("th", { class: "wide" }, "Runs on"))),
      list)
    : null;
  const back = jobId && build.jobs.length > 1
    ? h("p", { class: "sub" }, h("a", { id: "all-jobs", href: route("projects", accountName, slug, "build", version) },
      `All ${build.jobs.length} jobs of this build`))
    : null;
  return h("div", {},
    h("p", { class: "sub" }, h("a", { href: route("projects", accountName, slug) }, slug)),
    h("h1", {}, `Build ${build.version} `, status),
    h("p", { class: "sub" }, `${build.branch} · ${build.commitId.slice(0, 8)} · ${build.message}`),
    actions, message.element, back, h("div", { id: "jobs" }, jobs, pane ? pane.element : null), deploy);
}
