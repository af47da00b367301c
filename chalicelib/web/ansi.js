// ANSI SGR colours as spans with classes (text nodes only, never HTML); other escape sequences are dropped.
// State carries across chunks, and so does a sequence a chunk boundary cut in two.

const SEQUENCE = /\x1b\[([0-9;?]*)([@-~])|\x1b[@-Z\\-_]|[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]/g;
const CUT_SEQUENCE = /\x1b(\[[0-9;?]*)?$/;

export class AnsiWriter {
  constructor(target) {
    this.target = target;
    this.carry = "";
    this.reset();
  }

  reset() {
    this.bold = false; this.dim = false; this.italic = false; this.underline = false;
    this.fg = null; this.bg = null;  // a palette index (0-15), or an "rgb(...)" string
  }

  write(text) {
    text = (this.carry + text).replace(/\r\n/g, "\n");
    const cut = CUT_SEQUENCE.exec(text);
    this.carry = cut ? cut[0] : "";
    if (cut) text = text.slice(0, cut.index);
    let last = 0;
    for (const match of text.matchAll(SEQUENCE)) {
      this.text(text.slice(last, match.index));
      if (match[2] === "m") this.sgr(match[1]);
      last = match.index + match[0].length;
    }
    this.text(text.slice(last));
  }

  text(chunk) {
    chunk = chunk.replace(/\r/g, "");
    if (!chunk) return;
    const classes = [];
    if (this.bold) classes.push("ansi-bold");
    if (this.dim) classes.push("ansi-dim");
    if (this.italic) classes.push("ansi-italic");
    if (this.underline) classes.push("ansi-underline");
    if (typeof this.fg === "number") classes.push(`ansi-fg-${this.fg}`);
    if (typeof this.bg === "number") classes.push(`ansi-bg-${this.bg}`);
    if (!classes.length && this.fg === null && this.bg === null) {
      this.target.append(document.createTextNode(chunk));
      return;
    }
    const span = document.createElement("span");
    span.className = classes.join(" ");
    if (typeof this.fg === "string") span.style.color = this.fg;  // CSSOM, which the CSP allows
    if (typeof this.bg === "string") span.style.backgroundColor = this.bg;
    span.textContent = chunk;
    this.target.append(span);
  }

  sgr(parameters) {
    const codes = parameters === "" ? [0] : parameters.split(";").map((code) => Number.parseInt(code || "0", 10));
    for (let index = 0; index < codes.length; index++) {
      const code = codes[index];
      if (code === 0) this.reset();
      else if (code === 1) this.bold = true;
      else if (code === 2) this.dim = true;
      else if (code === 3) this.italic = true;
      else if (code === 4) this.underline = true;
      else if (code === 22) { this.bold = false; this.dim = false; }
      else if (code === 23) this.italic = false;
      else if (code === 24) this.underline = false;
      else if (code >= 30 && code <= 37) this.fg = code - 30;
      else if (code >= 90 && code <= 97) this.fg = code - 90 + 8;
      else if (code === 39) this.fg = null;
      else if (code >= 40 && code <= 47) this.bg = code - 40;
      else if (code >= 100 && code <= 107) this.bg = code - 100 + 8;
      else if (code === 49) this.bg = null;
      else if (code === 38 || code === 48) {
        const [colour, used] = extended(codes, index + 1);
        if (code === 38) this.fg = colour; else this.bg = colour;
        index += used;
      }
    }
  }
}

/** `5;n` (256 colours) or `2;r;g;b` after a 38 or 48: the colour and how many codes it took. */
function extended(codes, at) {
  if (codes[at] === 5 && codes.length > at + 1) {
    const n = codes[at + 1];
    if (n < 16) return [n, 2];
    if (n >= 232) {
      const grey = 8 + (n - 232) * 10;
      return [`rgb(${grey}, ${grey}, ${grey})`, 2];
    }
    const cube = n - 16;
    const level = (value) => (value === 0 ? 0 : 55 + value * 40);
    return [`rgb(${level(Math.floor(cube / 36))}, ${level(Math.floor(cube / 6) % 6)}, ${level(cube % 6)})`, 2];
  }
  if (codes[at] === 2 && codes.length > at + 3) {
    const [r, g, b] = codes.slice(at + 1, at + 4).map((value) => Math.min(255, Math.max(0, value)));
    return [`rgb(${r}, ${g}, ${b})`, 4];
  }
  return [null, codes.length - at];
}
