// A project's Tests tab (issue 38): its tests sorted by slowest, most failing or flaky, each with a sparkline of its
// recent outcomes, and the quarantine; from /projects/{accountName}/{projectSlug}/tests (Conveyor's extension).

import { sendJson, getJson } from "./api.js";
import { age, h, messageBox, route, submitting } from "./dom.js";
import { testDuration } from "./reports.js";

const SORTS = [["slowest", "Slowest"], ["failing", "Most failing"], ["flaky", "Flaky"], ["name", "Name"]];
const SVG = "http://www.w3.org/2000/svg";
const OUTCOME_NAMES = { P: "passed", F: "failed", S: "skipped" };

function svg(tag, attributes) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return element;
}

/** Recent outcomes, oldest first, one bar each: tall and red for a failure, short for a skip. */
export function sparkline(outcomes) {
  const width = Math.max(1, outcomes.length) * 3;
  const line = svg("svg", {
    class: "sparkline", width, height: 14, viewBox: `0 0 ${width} 14`, role: "img",
    "aria-label": `last ${outcomes.length} runs: ${outcomes.split("").filter((c) => c === "F").length} failed`,
  });
  outcomes.split("").forEach((code, index) => {
    const height = code === "F" ? 14 : code === "P" ? 8 : 3;
    line.append(svg("rect", {
      x: index * 3, y: 14 - height, width: 2, height,
      fill: code === "F" ? "#d64545" : code === "P" ? "#2f9e6b" : "#999999",
      "data-outcome": OUTCOME_NAMES[code] || "other",
    }));
  });
  return line;
}

export async function testsView(page, accountName, slug, chosen) {
  const sort = SORTS.some(([name]) => name === chosen) ? chosen : "slowest";
  const path = `/projects/${encodeURIComponent(accountName)}/${encodeURIComponent(slug)}`;
  const [{ tests, quarantine }, held] = await Promise.all([
    getJson(`${path}/tests?sort=${encodeURIComponent(sort)}`), getJson(`${path}/tests/quarantine`),
  ]);
  const sorts = h("nav", { class: "actions", id: "test-sorts" }, SORTS.map(([name, label]) => name === sort
    ? h("strong", {}, label)
    : h("a", { href: route("projects", accountName, slug, "tests", name) }, label)));
  const rows = tests.map((test) => h("tr", { "data-test": test.testName, "data-flaky": String(test.flaky) },
    h("td", {}, test.testName,
      test.flaky ? h("span", { class: "status failed", "data-flag": "flaky" }, "flaky") : null,
      test.quarantined ? h("span", { class: "status cancelled", "data-flag": "quarantined" }, "quarantined") : null,
      test.lastFailure && test.lastFailure.errorMessage
        ? h("div", { class: "report-detail" }, test.lastFailure.errorMessage) : null),
    h("td", { class: "wide" }, sparkline(test.recentOutcomes)),
    h("td", { class: "number wide" }, String(test.runs)),
    h("td", { class: "number" }, `${Math.round(test.failureRate * 100)} %`),
    h("td", { class: "number wide" }, testDuration(test.medianMilliseconds)),
    h("td", { class: "number" }, testDuration(test.p95Milliseconds)),
    h("td", { class: "wide" }, test.lastFailure ? `${test.lastFailure.buildVersion} · ${age(test.lastFailure.finished)}` : "")));

  const message = messageBox();
  const toggle = h("form", { id: "quarantine" },
    h("button", { type: "submit" }, quarantine ? "Turn quarantine off" : "Turn quarantine on"));
  toggle.addEventListener("submit", (event) => {
    event.preventDefault();
    submitting(toggle, message, async () => {
      await sendJson("PUT", `${path}/tests/quarantine`, { enabled: !quarantine });
      page.alive && window.dispatchEvent(new HashChangeEvent("hashchange"));
    });
  });
  const heldRows = held.tests.map((test) => {
    const release = h("button", { type: "button", class: "link" }, "Release");
    release.addEventListener("click", () => submitting(toggle, message, async () => {
      await sendJson("DELETE", `${path}/tests/quarantine/${encodeURIComponent(test.testId)}`);
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    }));
    return h("li", { "data-test": test.testName }, test.testName, " ", release);
  });

  return h("div", {},
    h("h1", {}, h("a", { href: route("projects", accountName, slug) }, slug), " · Tests"),
    sorts,
    tests.length
      ? h("table", { class: "table", id: "tests" },
        h("thead", {}, h("tr", {},
          h("th", {}, "Test"), h("th", { class: "wide" }, "Recent"), h("th", { class: "number wide" }, "Runs"),
          h("th", { class: "number" }, "Failing"), h("th", { class: "number wide" }, "Median"),
          h("th", { class: "number" }, "p95"), h("th", { class: "wide" }, "Last failure"))),
        h("tbody", {}, rows))
      : h("p", { class: "empty", id: "tests" }, "No tests reported yet."),
    h("h2", {}, "Quarantine"),
    h("p", { class: "sub" }, quarantine
      ? "On: a job whose test_script failed only by quarantined tests does not fail."
      : "Off: every failed test fails its job."),
    toggle, message.element,
    heldRows.length ? h("ul", { id: "quarantined" }, heldRows) : h("p", { class: "empty" }, "No quarantined tests."));
}
