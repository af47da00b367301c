// Signing in: an e-mail address and password (a session cookie), or a pasted API key (sessionStorage only).

import { ApiError, auth, getJson, signIn } from "./api.js";
import { h, messageBox, submitting } from "./dom.js";

export async function signInView(page) {
  const passwordMessage = messageBox();
  const keyMessage = messageBox();
  const done = async () => {
    await page.refreshCaller();
    location.hash = "#/projects";
  };
  const passwordForm = h("form", { class: "stack", id: "sign-in-password" },
    h("label", {}, "E-mail", h("input", { name: "email", type: "email", autocomplete: "username", required: true })),
    h("label", {}, "Password",
      h("input", { name: "password", type: "password", autocomplete: "current-password", required: true })),
    h("label", {}, "Account (optional)", h("input", { name: "account", autocomplete: "organization" })),
    h("button", { class: "primary", type: "submit" }, "Sign in"),
    passwordMessage.element);
  passwordForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const form = new FormData(passwordForm);
    submitting(passwordForm, passwordMessage, async () => {
      await signIn(form.get("email").trim(), form.get("password"), form.get("account").trim());
      await done();
    });
  });
  const keyForm = h("form", { class: "stack", id: "sign-in-key" },
    h("label", {}, "API key", h("input", { name: "key", type: "password", autocomplete: "off", required: true })),
    h("label", {}, "Account (needed for a v2. key)", h("input", { name: "account" })),
    h("button", { type: "submit" }, "Use this key"),
    keyMessage.element);
  keyForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const form = new FormData(keyForm);
    submitting(keyForm, keyMessage, async () => {
      auth.useKey(form.get("key").trim(), form.get("account").trim());
      try {
        await getJson("/caller");
      } catch (error) {
        auth.forget();
        if (error instanceof ApiError && error.status === 401) {
          throw new Error(`This API key was not accepted (${error.message}): check that it was copied whole, `
            + "and give its account's name with a v2. key.");
        }
        throw error;
      }
      await done();
    });
  });
  return h("div", {},
    h("h1", {}, "Sign in"),
    h("div", { class: "two" },
      h("section", { class: "card" }, h("h2", {}, "With your e-mail and password"), passwordForm),
      h("section", { class: "card" },
        h("h2", {}, "With an API key"),
        h("p", { class: "empty" }, "The key stays in this tab only, and goes with each request as a Bearer token."),
        keyForm)));
}
