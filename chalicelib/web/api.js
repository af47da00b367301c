// Every call the dashboard makes goes to the service's /api endpoints, as any client's does: with the session
// cookie (set by signing in; script cannot read it) or with a pasted API key, kept in sessionStorage only.

const KEY = "conveyor.apiKey";
const ACCOUNT = "conveyor.account";
// Writes signed by the cookie need it (a page of another site cannot send it); sent with every call.
const CSRF = { "X-Requested-With": "conveyor-dashboard" };

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export const auth = {
  get key() { return sessionStorage.getItem(KEY); },
  get account() { return sessionStorage.getItem(ACCOUNT); },
  useKey(key, account) {
    sessionStorage.setItem(KEY, key);
    if (account) sessionStorage.setItem(ACCOUNT, account);
    else sessionStorage.removeItem(ACCOUNT);
  },
  forget() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(ACCOUNT);
  },
};

// The service's /api, under the page's <base>: the stage's path at API Gateway's stage URL (/prod/api), else /api.
const API = new URL("api", document.baseURI).pathname;

/** The service's base URL, as its clients are given it (`conveyor agent --url`): the page's <base>, no final slash. */
export function serviceUrl() {
  return new URL(".", document.baseURI).href.replace(/\/$/, "");
}

/** Where the account's routes are: under /api/account/{name} when the user named one (user-level keys need it). */
function base() {
  return auth.account ? `${API}/account/${encodeURIComponent(auth.account)}` : API;
}

export function apiUrl(path) {
  return base() + path;
}

/** The fetch Response of one call; an ApiError with the service's message unless its status is in `accept`. */
export async function call(method, path, { json, text, headers = {}, accept = [], root = false } = {}) {
  const sent = { ...CSRF, ...headers };
  if (auth.key) sent.Authorization = `Bearer ${auth.key}`;
  let body;
  if (json !== undefined) {
    body = JSON.stringify(json);
    sent["Content-Type"] = "application/json";
  } else if (text !== undefined) {
    body = text;
    sent["Content-Type"] = "text/plain; charset=utf-8";
  }
  const response = await fetch((root ? API : base()) + path, {
    method, headers: sent, body, credentials: "same-origin", cache: "no-store",
  });
  if (response.ok || accept.includes(response.status)) return response;
  let message = `${response.status} ${response.statusText}`;
  try {
    message = (await response.json()).message || message;
  } catch { /* not JSON: the status says it */ }
  throw new ApiError(response.status, message);
}

export async function getJson(path) {
  return (await call("GET", path)).json();
}

export async function sendJson(method, path, json) {
  const response = await call(method, path, { json });
  return response.status === 204 ? null : response.json();
}

export async function signIn(email, password, accountName) {
  auth.forget();
  const body = { email, password };
  if (accountName) body.accountName = accountName;
  await call("POST", "/session", { json: body, root: true });
}

export async function signOut() {
  const usedKey = Boolean(auth.key);
  auth.forget();
  if (!usedKey) await call("DELETE", "/session", { root: true, accept: [401, 403] });
}
