// Following a job's log while it runs: a Range read from where the last one ended, every second, appended
// with its colours, and the box kept scrolled to the end unless its reader scrolled up. A log that was already
// finished when the page opened is read from its top (its first lines are what its reader looks for).

import { call } from "./api.js";
import { AnsiWriter } from "./ansi.js";
import { h } from "./dom.js";

const CONTENT_RANGE = /bytes (\d+)-(\d+)\/(\d+)/;
const PAST_END = /bytes \*\/(\d+)/;

export class LogFollower {
  constructor(jobId) {
    this.jobId = jobId;
    this.code = h("code");
    this.element = h("pre", { class: "log", "data-job": jobId, tabindex: "0" }, this.code);
    this.busy = false;
    this.reset();
    // Following the end until the reader scrolls up, and again once they scroll back down; a box that changes
    // size (a narrower window wraps more lines) stays at the end it was at.
    this.following = true;
    const box = this.element;
    box.addEventListener("scroll", () => {
      if (box.clientHeight) this.following = box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
    });
    new ResizeObserver(() => this.keepAtEnd()).observe(box);
  }

  /** Forget what was shown: the job runs again (a re-run), and its log starts again from its first byte. */
  reset() {
    this.offset = 0;
    this.code.replaceChildren();
    this.writer = new AnsiWriter(this.code);
  }

  /** Follow the end (a running job), or stay where the reader is, at the top of a finished log at first. */
  follow(following) {
    this.following = following;
    if (following) this.keepAtEnd();
  }

  keepAtEnd() {
    if (this.following) this.element.scrollTop = this.element.scrollHeight;
  }

  /** Read what the log gained since the last read (nothing happens while a read is under way). */
  async poll() {
    if (this.busy) return;
    this.busy = true;
    try {
      await this.read();
    } finally {
      this.busy = false;
    }
  }

  async read() {
    const response = await call("GET", `/buildjobs/${encodeURIComponent(this.jobId)}/log`, {
      headers: { Range: `bytes=${this.offset}-` },
      accept: [404, 416],
    });
    if (response.status === 206) {
      const range = CONTENT_RANGE.exec(response.headers.get("Content-Range") || "");
      const text = await response.text();
      if (range) this.offset = Number(range[2]) + 1;
      this.append(text);
    } else if (response.status === 200) {  // the whole log (a server that ignored the range)
      const text = await response.text();
      this.reset();
      this.offset = new TextEncoder().encode(text).length;
      this.append(text);
    } else if (response.status === 416) {  // shorter than what was shown: another attempt's log, read it anew
      const past = PAST_END.exec(response.headers.get("Content-Range") || "");
      if (past && Number(past[1]) < this.offset) {
        this.reset();
        if (Number(past[1]) > 0) await this.read();
      }
    }
  }

  append(text) {
    if (!text) return;
    this.writer.write(text);
    this.keepAtEnd();
  }
}
