// What a job's scripts reported through the Build Worker API (`appveyor AddTest`, a test reporter, `AddMessage`):
// its tests (name, outcome, duration) and its messages (category, text), from /buildjobs/{jobId}/tests and /messages.

import { getJson } from "./api.js";
import { h } from "./dom.js";

/** A test's duration as people read it: "12 ms", "1.5 s", "2 min 3 s"; nothing when none was reported. */
export function testDuration(milliseconds) {
  if (milliseconds === null || milliseconds === undefined) return "";
  if (milliseconds < 1000) return `${milliseconds} ms`;
  if (milliseconds < 60000) return `${(milliseconds / 1000).toFixed(1)} s`;
  const seconds = Math.round(milliseconds / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

function pill(kind, text) {
  return h("span", { class: `status ${kind}` }, text);
}

export class JobReports {
  constructor(jobId) {
    this.jobId = jobId;
    this.messages = h("section", { class: "reports", "data-reports": "messages", hidden: true });
    this.tests = h("section", { class: "reports", "data-reports": "tests", hidden: true });
    this.element = h("div", {}, this.tests, this.messages);
    this.busy = false;
  }

  /** Read the job's tests and messages again and show them (nothing happens while a read is under way). */
  async load() {
    if (this.busy) return;
    this.busy = true;
    try {
      const job = encodeURIComponent(this.jobId);
      const [tests, messages] = await Promise.all([
        getJson(`/buildjobs/${job}/tests`), getJson(`/buildjobs/${job}/messages`),
      ]);
      this.showTests(tests);
      this.showMessages(messages);
    } finally {
      this.busy = false;
    }
  }

  showTests(tests) {
    this.tests.hidden = !tests.length;
    if (!tests.length) {
      this.tests.replaceChildren();
      return;
    }
    const count = (outcome) => tests.filter((test) => test.outcome === outcome).length;
    const rows = tests.map((test) => h("tr", { "data-test": test.testName, "data-outcome": test.outcome },
      h("td", {}, test.testName, test.ErrorMessage ? h("div", { class: "report-detail" }, test.ErrorMessage) : null,
        test.ErrorStackTrace
          ? h("details", { class: "stack-trace" }, h("summary", {}, "Stack trace"),
            h("pre", { class: "report-detail" }, test.ErrorStackTrace))
          : null),
      h("td", {}, pill(test.outcome.toLowerCase(), test.outcome)),
      h("td", { class: "number" }, testDuration(test.durationMilliseconds))));
    this.tests.replaceChildren(
      h("h3", {}, "Tests ", h("span", { class: "counts" },
        `${tests.length} · ${count("Passed")} passed · ${count("Failed")} failed`)),
      h("table", { class: "table" },
        h("thead", {}, h("tr", {}, h("th", {}, "Name"), h("th", {}, "Outcome"), h("th", { class: "number" }, "Duration"))),
        h("tbody", {}, rows)));
  }

  showMessages(messages) {
    this.messages.hidden = !messages.length;
    if (!messages.length) {
      this.messages.replaceChildren();
      return;
    }
    const where = (message) => message.fileName
      ? h("span", { class: "mono" }, ` ${message.fileName}${message.line === null ? "" : `:${message.line}`}`) : null;
    this.messages.replaceChildren(
      h("h3", {}, "Messages ", h("span", { class: "counts" }, String(messages.length))),
      h("ul", { class: "report-messages" }, messages.map((message) => h("li", { "data-category": message.category },
        pill(message.category, message.category),
        h("span", {}, message.message, where(message)),
        message.details ? h("div", { class: "report-detail" }, message.details) : null))));
  }
}
