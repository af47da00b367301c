// Environments, an environment's deployments, and one deployment with its jobs' logs.

import { getJson } from "./api.js";
import { age, duration, h, isFinal, route, statusBadge } from "./dom.js";
import { LogFollower } from "./log.js";

export async function environmentsView() {
  const environments = await getJson("/environments");
  return h("div", {},
    h("h1", {}, "Environments"),
    environments.length
      ? h("table", { class: "table", id: "environments" },
        h("thead", {}, h("tr", {}, h("th", {}, "Environment"), h("th", {}, "Provider"), h("th", { class: "wide" }, "Created"))),
        h("tbody", {}, environments.map((environment) => h("tr", {},
          h("td", {}, h("a", { href: route("environments", environment.deploymentEnvironmentId) }, environment.name)),
          h("td", {}, environment.provider),
          h("td", { class: "wide" }, age(environment.created))))))
      : h("p", { class: "empty" }, "No environments yet: add them through the API."),
    h("p", { class: "empty" }, "To deploy, open a successful build and pick an environment."));
}

export async function environmentView(page, environmentId) {
  const { environment, deployments } = await getJson(`/environments/${encodeURIComponent(environmentId)}/deployments`);
  return h("div", {},
    h("h1", {}, environment.name),
    h("p", { class: "sub" }, environment.provider),
    deployments.length
      ? h("table", { class: "table", id: "environment-deployments" },
        h("thead", {}, h("tr", {}, h("th", {}, "Deployment"), h("th", {}, "Project"), h("th", { class: "wide" }, "Build"),
          h("th", {}, "Status"), h("th", { class: "wide" }, "Created"))),
        h("tbody", {}, deployments.map(({ project, deployment }) => h("tr", { class: `status-row ${deployment.status}` },
          h("td", {}, h("a", { href: route("deployments", deployment.deploymentId) }, `#${deployment.deploymentId}`)),
          h("td", {}, project.name),
          h("td", { class: "wide" }, deployment.build ? deployment.build.version : ""),
          h("td", {}, statusBadge(deployment.status)),
          h("td", { class: "wide" }, age(deployment.created))))))
      : h("p", { class: "empty" }, "No deployments yet."));
}

export async function deploymentView(page, deploymentId) {
  const path = `/deployments/${encodeURIComponent(deploymentId)}`;
  let { project, deployment } = await getJson(path);
  const status = h("span", { id: "deployment-status" });
  const jobs = h("div", { id: "jobs" });
  const parts = new Map();
  const render = async () => {
    status.replaceChildren(statusBadge(deployment.status));
    for (const job of deployment.jobs) {
      let part = parts.get(job.jobId);
      if (!part) {
        part = { follower: new LogFollower(job.jobId), status: h("span"), duration: h("span", { class: "duration" }) };
        part.follower.follow(!isFinal(job.status));  // a finished log opens at its top, a running one at its end
        parts.set(job.jobId, part);
        jobs.append(h("article", { class: "job", "data-job": job.jobId },
          h("header", {}, h("span", { class: "name" }, job.name || "Deployment job"), part.status, part.duration),
          part.follower.element));
      }
      if (part.lastStatus !== job.status) part.status.replaceChildren(statusBadge(job.status));
      part.duration.textContent = duration(job.started, job.finished);
      if (job.status !== "queued" && (!isFinal(job.status) || part.lastStatus !== job.status)) await part.follower.poll();
      part.lastStatus = job.status;
    }
  };
  await render();
  page.every(1000, async () => {
    if (!isFinal(deployment.status) || deployment.jobs.some((job) => !isFinal(job.status))) {
      ({ project, deployment } = await getJson(path));
      await render();
    }
  });
  const build = deployment.build;
  return h("div", {},
    h("p", { class: "sub" }, h("a", { href: route("projects", project.accountName, project.slug) }, project.name)),
    h("h1", {}, `Deployment #${deployment.deploymentId} `, status),
    h("p", { class: "sub" },
      `${deployment.environment.name} (${deployment.environment.provider})`,
      build ? [" · build ", h("a", { href: route("projects", project.accountName, project.slug, "build", build.version) }, build.version)] : ""),
    jobs);
}
