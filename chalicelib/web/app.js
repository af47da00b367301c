// The dashboard's one page: a hash router (#/projects/...) over views that each read the /api endpoints.

import { agentsView } from "./agents.js";
import { ApiError, auth, getJson, signOut } from "./api.js";
import { buildView } from "./build.js";
import { deploymentView, environmentsView, environmentView } from "./deploy.js";
import { h } from "./dom.js";
import { projectsView, projectView } from "./projects.js";
import { signInView } from "./signin.js";
import { testsView } from "./tests.js";

const ROUTES = [
  [/^#\/signin$/, signInView, { open: true }],
  [/^#\/projects$/, projectsView],
  [/^#\/projects\/([^/]+)\/([^/]+)$/, projectView],
  [/^#\/projects\/([^/]+)\/([^/]+)\/build\/([^/]+)$/, buildView],
  [/^#\/projects\/([^/]+)\/([^/]+)\/build\/([^/]+)\/job\/([^/]+)$/, buildView],
  [/^#\/projects\/([^/]+)\/([^/]+)\/tests(?:\/([a-z]+))?$/, testsView],
  [/^#\/environments$/, environmentsView],
  [/^#\/environments\/(\d+)$/, environmentView],
  [/^#\/deployments\/(\d+)$/, deploymentView],
  [/^#\/agents$/, agentsView],
];

const view = document.getElementById("view");
let caller = null;
let current = null;

/** What one view may do while it is shown: repeat work, stopped as soon as another view replaces it. */
class Page {
  constructor() {
    this.alive = true;
    this.timers = [];
  }

  every(milliseconds, work) {
    let running = false;
    this.timers.push(setInterval(async () => {
      if (running || !this.alive) return;
      running = true;
      try {
        await work();
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) signedOut();
        else console.warn(error);
      } finally {
        running = false;
      }
    }, milliseconds));
  }

  leave() {
    this.alive = false;
    this.timers.forEach(clearInterval);
  }

  async refreshCaller() {
    caller = await getJson("/caller");
    showCaller();
  }
}

function showCaller() {
  document.getElementById("nav").hidden = !caller;
  document.getElementById("sign-out").hidden = !caller;
  document.getElementById("who").textContent = caller
    ? `${caller.fullName || caller.email} · ${caller.accountName} (${caller.roleName})${auth.key ? " · API key" : ""}`
    : "";
}

async function show() {
  const hash = location.hash || "#/projects";
  const found = ROUTES.map(([pattern, render, options]) => [pattern.exec(hash), render, options || {}])
    .find(([match]) => match);
  if (current) current.leave();
  const page = (current = new Page());
  if (!found) {
    view.replaceChildren(h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/projects" }, "Projects")));
    return;
  }
  const [match, render, options] = found;
  view.setAttribute("aria-busy", "true");
  try {
    if (!options.open && !caller) await page.refreshCaller();
    const content = await render(page, ...match.slice(1).map(decodeURIComponent));
    if (page.alive) view.replaceChildren(content);
  } catch (error) {
    if (!page.alive) return;
    if (error instanceof ApiError && error.status === 401) {
      signedOut();
      return;
    }
    view.replaceChildren(h("h1", {}, "Something went wrong"), h("p", { class: "message error", role: "alert" }, error.message));
  } finally {
    if (page.alive) view.setAttribute("aria-busy", "false");
  }
}

function signedOut() {
  caller = null;
  showCaller();
  if (location.hash !== "#/signin") location.hash = "#/signin";
  else show();
}

window.addEventListener("hashchange", show);
document.getElementById("sign-out").addEventListener("click", async () => {
  try {
    await signOut();
  } finally {
    signedOut();
  }
});
show();
