// The project list (with each last build) and one project: its history, a build to start, its deployments and
// its settings as YAML.

import { call, getJson, sendJson } from "./api.js";
import { age, duration, h, messageBox, route, statusBadge, submitting } from "./dom.js";

const PROVIDERS = ["gitHub", "gitLab", "bitBucket", "vso", "git", "mercurial", "subversion"];
const PAGE_SIZE = 20;

export async function projectsView(page) {
  const projects = await getJson("/projects");
  const rows = projects.map((project) => {
    const last = project.builds[0];
    const status = last ? last.status : "none";
    return h("tr", { class: `status-row ${status}`, "data-slug": project.slug },
      h("td", {}, h("a", { href: route("projects", project.accountName, project.slug) }, project.name)),
      h("td", { class: "wide mono" }, project.repositoryName),
      h("td", {}, last ? statusBadge(last.status) : h("span", { class: "empty" }, "no builds")),
      h("td", {}, last ? last.version : ""),
      h("td", { class: "wide" }, last ? last.branch : ""),
      h("td", {}, last ? age(last.finished || last.started || last.created) : ""));
  });
  const message = messageBox();
  const form = h("form", { id: "add-project" },
    h("label", {}, "Provider", h("select", { name: "provider" },
      PROVIDERS.map((name) => h("option", { value: name, selected: name === "gitHub" }, name)))),
    h("label", {}, "Repository", h("input", { name: "repository", required: true, placeholder: "owner/name or URL" })),
    h("button", { class: "primary", type: "submit" }, "Add project"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    submitting(form, message, async () => {
      const project = await sendJson("POST", "/projects", {
        repositoryProvider: data.get("provider"), repositoryName: data.get("repository").trim(),
      });
      location.hash = route("projects", project.accountName, project.slug);
    });
  });
  return h("div", {},
    h("h1", {}, "Projects"),
    rows.length
      ? h("table", { class: "table", id: "projects" },
        h("thead", {}, h("tr", {},
          h("th", {}, "Project"), h("th", { class: "wide" }, "Repository"), h("th", {}, "Last build"),
          h("th", {}, "Version"), h("th", { class: "wide" }, "Branch"), h("th", {}, "Age"))),
        h("tbody", {}, rows))
      : h("p", { class: "empty" }, "No projects yet."),
    h("h2", {}, "Add a project"), form, message.element);
}

export async function projectView(page, accountName, slug) {
  const path = `/projects/${encodeURIComponent(accountName)}/${encodeURIComponent(slug)}`;
  const first = await getJson(`${path}/history?recordsNumber=${PAGE_SIZE}`);
  const project = first.project;
  const history = h("tbody");
  const older = h("button", { type: "button", id: "older-builds" }, "Older builds");
  let branch = "";
  let lastBuildId = null;

  const show = (builds, replace) => {
    if (replace) history.replaceChildren();
    for (const build of builds) {
      history.append(h("tr", { class: `status-row ${build.status}`, "data-version": build.version },
        h("td", {}, h("a", { href: route("projects", accountName, slug, "build", build.version) }, build.version)),
        h("td", {}, statusBadge(build.status)),
        h("td", {}, build.branch),
        h("td", { class: "wide" }, build.message),
        h("td", {}, age(build.created)),
        h("td", { class: "wide" }, duration(build.started, build.finished))));
    }
    if (builds.length) lastBuildId = builds[builds.length - 1].buildId;
    older.hidden = builds.length < PAGE_SIZE;
    if (replace && !builds.length) history.append(h("tr", {}, h("td", { colspan: "6", class: "empty" }, "No builds.")));
  };
  const load = async (replace) => {
    const query = new URLSearchParams({ recordsNumber: PAGE_SIZE });
    if (branch) query.set("branch", branch);
    if (!replace && lastBuildId) query.set("startBuildId", lastBuildId);
    show((await getJson(`${path}/history?${query}`)).builds, replace);
  };
  show(first.builds, true);
  older.addEventListener("click", () => load(false));

  const filterMessage = messageBox();
  const filter = h("form", { id: "branch-filter" },
    h("label", {}, "Branch", h("input", { name: "branch", placeholder: "all branches" })),
    h("button", { type: "submit" }, "Filter"));
  filter.addEventListener("submit", (event) => {
    event.preventDefault();
    branch = new FormData(filter).get("branch").trim();
    submitting(filter, filterMessage, () => load(true));
  });

  const startMessage = messageBox();
  const start = h("form", { id: "start-build" },
    h("label", {}, "Branch", h("input", { name: "branch", value: project.repositoryBranch || "master", required: true })),
    h("button", { class: "primary", type: "submit" }, "Start build"));
  start.addEventListener("submit", (event) => {
    event.preventDefault();
    submitting(start, startMessage, async () => {
      const build = await sendJson("POST", "/builds", {
        accountName, projectSlug: slug, branch: new FormData(start).get("branch").trim(),
      });
      location.hash = route("projects", accountName, slug, "build", build.version);
    });
  });

  return h("div", {},
    h("h1", {}, project.name),
    h("p", { class: "sub mono" }, project.repositoryName),
    h("nav", { class: "actions" }, h("a", { id: "tests-tab", href: route("projects", accountName, slug, "tests") }, "Tests")),
    start, startMessage.element,
    h("h2", {}, "Builds"),
    filter, filterMessage.element,
    h("table", { class: "table", id: "history" },
      h("thead", {}, h("tr", {},
        h("th", {}, "Version"), h("th", {}, "Status"), h("th", {}, "Branch"), h("th", { class: "wide" }, "Message"),
        h("th", {}, "Created"), h("th", { class: "wide" }, "Duration"))),
      history),
    h("div", { class: "actions" }, older),
    h("h2", {}, "Deployments"),
    await deploymentsTable(path),
    h("h2", {}, "Settings (appveyor.yml)"),
    await yamlEditor(path));
}

async function deploymentsTable(path) {
  const { deployments } = await getJson(`${path}/deployments`);
  if (!deployments.length) return h("p", { class: "empty", id: "deployments" }, "No deployments.");
  return h("table", { class: "table", id: "deployments" },
    h("thead", {}, h("tr", {},
      h("th", {}, "Deployment"), h("th", {}, "Environment"), h("th", { class: "wide" }, "Build"), h("th", {}, "Status"),
      h("th", { class: "wide" }, "Created"))),
    h("tbody", {}, deployments.map(({ environment, deployment }) =>
      h("tr", { class: `status-row ${deployment.status}` },
        h("td", {}, h("a", { href: route("deployments", deployment.deploymentId) }, `#${deployment.deploymentId}`)),
        h("td", {}, environment.name),
        h("td", { class: "wide" }, deployment.build ? deployment.build.version : ""),
        h("td", {}, statusBadge(deployment.status)),
        h("td", { class: "wide" }, age(deployment.created))))));
}

async function yamlEditor(path) {
  const yaml = await (await call("GET", `${path}/settings/yaml`)).text();
  const message = messageBox();
  const text = h("textarea", { name: "yaml", spellcheck: "false", "aria-label": "appveyor.yml" });
  text.value = yaml;
  const form = h("form", { id: "settings-yaml", class: "stack-wide" }, text,
    h("button", { class: "primary", type: "submit" }, "Save settings"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submitting(form, message, async () => {
      await call("PUT", `${path}/settings/yaml`, { text: text.value });
      message.info("Saved.");
    });
  });
  return h("div", {}, form, message.element);
}
