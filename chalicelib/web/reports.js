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

/** A test's stack trace and output, folded away until asked for. */
function folded(label, text, kind) {
  return text ? h("details", { class: "report-fold", "data-fold": kind },
    h("summary", {}, label), h("pre", { class: "report-detail" }, text)) : null;
}

export class JobReports {
  constructor(jobId) {
    this.jobId = jobId;
    this.messages = h("section", { class: "reports", "data-reports": "messages" });
    this.tests = h("section", { class: "reports", "data-reports": "tests" });
    this.counts = { tests: 0, messages: 0 };
    this.busy = false;
    this.showTests([]);
    this.showMessages([]);
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
    this.counts.tests = tests.length;
    if (!tests.length) {
      this.tests.replaceChildren(h("p", { class: "empty" }, "No tests reported."));
      return;
    }
    const count = (outcome) => tests.filter((test) => test.outcome === outcome).length;
    const rows = tests.map((test) => h("tr", { "data-test": test.testName, "data-outcome": test.outcome },
      h("td", {}, test.testName,
        test.ErrorMessage ? h("div", { class: "report-detail" }, test.ErrorMessage) : null,
        folded("Stack trace", test.ErrorStackTrace, "stack"),
        folded("Output", test.StdOut, "stdout"),
        folded("Error output", test.StdErr, "stderr")),
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
    this.counts.messages = messages.length;
    if (!messages.length) {
      this.messages.replaceChildren(h("p", { class: "empty" }, "No messages."));
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
