// Building the page from elements and text nodes only: nothing the service sends is ever parsed as HTML.

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "class") element.className = value;
    else if (name === "value") element.value = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export const FINAL = ["success", "failed", "cancelled"];

export function isFinal(status) {
  return FINAL.includes(status);
}

export function statusBadge(status) {
  return h("span", { class: `status ${status}`, "data-status": status }, status);
}

export function age(timestamp) {
  if (!timestamp) return "";
  const seconds = Math.max(0, (Date.now() - Date.parse(timestamp)) / 1000);
  if (seconds < 60) return "just now";
  const [size, unit] = seconds < 3600 ? [60, "min"] : seconds < 86400 ? [3600, "h"] : [86400, "d"];
  return `${Math.floor(seconds / size)} ${unit} ago`;
}

export function duration(started, finished) {
  if (!started) return "";
  const seconds = Math.max(0, Math.round(((finished ? Date.parse(finished) : Date.now()) - Date.parse(started)) / 1000));
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** A place for a form's outcome: an error in place (role=alert), or a note. */
export function messageBox() {
  const box = h("p", { class: "message", role: "alert" });
  return {
    element: box,
    error(text) { box.className = "message error"; box.textContent = text; },
    info(text) { box.className = "message info"; box.textContent = text; },
    clear() { box.className = "message"; box.textContent = ""; },
  };
}

/** Run `action` from a form: its button disabled meanwhile, its error shown in `message`. */
export async function submitting(form, message, action) {
  const buttons = [...form.querySelectorAll("button")];
  buttons.forEach((button) => { button.disabled = true; });
  message.clear();
  try {
    await action();
  } catch (error) {
    message.error(error.message);
  } finally {
    buttons.forEach((button) => { button.disabled = false; });
  }
}

export function route(...parts) {
  return "#/" + parts.map((part) => encodeURIComponent(part)).join("/");
}
