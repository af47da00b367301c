// The account's build agents: the images each serves, whether it is connected, and the job it last took.
// Read-only: registering one shows its key once, so that is done through the API.

import { getJson, serviceUrl } from "./api.js";
import { age, h } from "./dom.js";

const REFRESH_EVERY_MS = 10000;  // an agent counts as connected for a minute after it last asked for work

function agentsTable(agents) {
  if (!agents.length) {
    return h("p", { class: "empty", id: "no-agents" },
      "No build agents yet. To add one, register it with ", h("code", {}, "POST /api/build-agents"),
      " and its name and images (the reply shows its key once), then run ",
      h("code", {}, `CONVEYOR_AGENT_KEY=<key> conveyor agent --builds --url ${serviceUrl()}`), " on that machine.");
  }
  return h("table", { class: "table", id: "agents" },
    h("thead", {}, h("tr", {}, h("th", {}, "Agent"), h("th", {}, "Images"), h("th", {}, "Connection"),
      h("th", { class: "wide" }, "Last contact"), h("th", { class: "wide" }, "Last job"))),
    h("tbody", {}, agents.map((agent) => h("tr", { "data-agent": agent.agentId },
      h("td", {}, agent.name),
      h("td", {}, agent.images.join(", ")),
      h("td", {}, h("span", { class: agent.connected ? "status connected" : "status" },
        agent.connected ? "connected" : "not connected")),
      h("td", { class: "wide" }, agent.lastContact ? age(agent.lastContact) : "never"),
      h("td", { class: "wide mono" }, agent.lastJobId || "")))));
}

export async function agentsView(page) {
  const list = h("div", {}, agentsTable(await getJson("/build-agents")));
  page.every(REFRESH_EVERY_MS, async () => list.replaceChildren(agentsTable(await getJson("/build-agents"))));
  return h("div", {},
    h("h1", {}, "Build agents"),
    list);
}
