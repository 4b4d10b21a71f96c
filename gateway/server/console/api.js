// The console's one way to the API v1, and the small DOM helpers every page
// shares. The token is read from sessionStorage and sent as a bearer header;
// it never goes into a URL. A portal session's capabilities say which
// controls show (`can`, and `data-needs` in the page).

/** Whether the tab's sessionStorage could be had (see `tabStorage`). */
let tabKept = true;

/**
 * This tab's sessionStorage; where the browser refuses it (a frame on another
 * site, whose storage it blocks), a memory of this page's own, which a reload
 * forgets.
 */
function tabStorage() {
  try {
    const storage = window.sessionStorage;
    storage.getItem("hookgate.token");
    return storage;
  } catch {
    tabKept = false;
    const items = new Map();
    return {
      getItem: (key) => items.get(key) ?? null,
      setItem: (key, value) => void items.set(key, String(value)),
      removeItem: (key) => void items.delete(key),
      clear: () => items.clear(),
      get length() {
        return items.size;
      },
    };
  }
}

export const store = tabStorage();
/** Whether the token outlives a reload of the page: false where the browser blocks this frame's storage. */
export const storeOutlivesReload = tabKept;
export const $ = (id) => document.getElementById(id);

/** The portal session signed in with (`GET /v1/portal-session`), or null for a key or the admin token. */
let portal = null;
/** Called when the API refuses the signed-in portal session (expired or revoked); answers the error to show. */
let ended = (error) => error;

/** The capabilities a portal session may hold. */
export const CAPABILITIES = ["view", "manage_endpoints", "read_secrets", "replay", "manage_plugins"];

/**
 * Sets the portal session (or null): the page's `data-lacks` names what it
 * may not do, and the stylesheet hides every control whose `data-needs`
 * names one of those.
 */
export function setPortal(session) {
  portal = session;
  const lacks = session ? CAPABILITIES.filter((c) => !can(c)) : [];
  // A session limited to some endpoints lacks what reaches every endpoint.
  if (session && !can(ALL_ENDPOINTS)) lacks.push(ALL_ENDPOINTS);
  if (lacks.length) document.body.dataset.lacks = lacks.join(" ");
  else delete document.body.dataset.lacks;
}

/** Not a capability the API names: what a session limited to some endpoints lacks (the tenant-wide figures, DLQ summary and bulk replay, creating an endpoint). */
export const ALL_ENDPOINTS = "all_endpoints";

/** Whether the signed-in token may do what `capability` allows: a key and the admin token may do all. */
export const can = (capability) =>
  !portal ||
  (capability === ALL_ENDPOINTS ? !(portal.endpoints || []).length : portal.capabilities.includes(capability));

/**
 * `f(error)` runs once per portal session, at the first 401 the API answers
 * it; what `f` returns is thrown by that request and every later one of the
 * session.
 */
export function onSessionEnded(f) {
  ended = f;
}

/**
 * Sends one API request with the bearer token (the signed-in one unless
 * `token` is given); resolves to the response when it is 2xx, or throws the
 * API's error (with the HTTP `status`, which pages use to tell "this route is
 * not there" from a failure). A 401 to the signed-in portal session ends it.
 */
async function request(path, method, body, contentType, token = undefined) {
  const session = token === undefined ? portal : null;
  const headers = { authorization: `Bearer ${token ?? store.getItem("hookgate.token")}` };
  let payload;
  if (body instanceof ArrayBuffer) {
    headers["content-type"] = contentType;
    payload = body;
  } else if (body !== undefined) {
    headers["content-type"] = contentType;
    payload = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, { method, headers, body: payload });
  } catch (e) {
    throw { code: "unreachable", message: `The gateway did not answer: ${e.message}` };
  }
  if (!response.ok) {
    const answer = await response.json().catch(() => null);
    const error = answer && answer.error ? answer.error : { code: `http_${response.status}`, message: response.statusText || "The request failed" };
    if (response.status === 401 && session) {
      if (!session.ended) session.ended = ended({ ...error, status: 401 });
      throw session.ended;
    }
    throw { ...error, status: response.status };
  }
  return response;
}

/** A GET made with `token` rather than the signed-in one: how sign-in checks a token before keeping it. */
export async function apiAs(token, path) {
  return (await request(path, "GET", undefined, undefined, token)).json();
}

/** Calls the API with a JSON body (or raw bytes); resolves to the JSON answer, or throws the API's error. */
export async function api(path, method = "GET", body = undefined, contentType = "application/json") {
  const response = await request(path, method, body, contentType);
  if (response.status === 204) return null;
  return response.json().catch(() => null);
}

/** A GET's answer as text: for JSON whose bytes matter (an event's payload, shown as received). */
export async function apiText(path) {
  return (await request(path, "GET", undefined, undefined)).text();
}

/** The API error (or nothing) in the page's alert line: message and code. */
export function showError(error) {
  const box = $("error");
  box.textContent = error ? `${error.message} (${error.code})` : "";
  box.hidden = !error;
}

/** A short confirmation line under the page title. */
export function showNotice(text) {
  const box = $("notice");
  box.textContent = text || "";
  box.hidden = !text;
}

/** The signed-in tenant, or the error pages about one tenant show. */
export function tenant() {
  const id = store.getItem("hookgate.tenant");
  if (!id) throw { code: "no_tenant", message: "Pick a tenant (or sign in with a tenant's key and id) to see this page" };
  return id;
}

/** The most items a list or picker loads through `allPages`. */
export const MOST_LISTED = 1000;

/** Every item of a list route (`path` without a query), following its cursor, up to `MOST_LISTED`. */
export async function allPages(path) {
  const all = [];
  let cursor = null;
  do {
    const page = await api(`${path}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    all.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor && all.length < MOST_LISTED);
  return all;
}

/** Fills the admin's tenant picker: the whole gateway, then every tenant, with `chosen` selected. */
export async function tenantChoices(select, chosen) {
  const ids = (await allPages("/v1/tenants")).map((t) => t.id);
  select.replaceChildren(el("option", { value: "", text: "(the whole gateway)" }), ...ids.map((id) => el("option", { value: id, text: id })));
  select.value = chosen || "";
}

/** The signed-in tenant's API path prefix. */
export const tenantPath = () => `/v1/tenants/${encodeURIComponent(tenant())}`;

/** An element with attributes (`text` sets its text) and children. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "on") for (const [name, f] of Object.entries(value)) node.addEventListener(name, f);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  node.append(...children.filter((c) => c !== undefined && c !== null));
  return node;
}

/**
 * Replaces `node`'s children with `make()`'s unless `data` is what it last
 * drew: a poll that finds nothing new keeps the rows, and the focus in them.
 */
export function redraw(node, data, make) {
  const signature = JSON.stringify(data);
  if (node.dataset.drawn === signature) return;
  node.dataset.drawn = signature;
  node.replaceChildren(...make());
}

/** Empties `node`, forgetting what `redraw` last drew there. */
export function clear(node) {
  delete node.dataset.drawn;
  node.replaceChildren();
}

/** A table cell; null shows as a dash. */
export const cell = (text) => el("td", { text: text == null || text === "" ? "–" : text });

/** A row for an empty list, spanning `columns`. */
export const emptyRow = (columns, text) => el("tr", { class: "empty" }, el("td", { colspan: columns, text }));

/** A link to a console page. */
export const link = (hash, text) => el("a", { href: hash, text });

// Dates in the browser's own locale and time zone, to the second.
const TIME = new Intl.DateTimeFormat(undefined, { timeStyle: "medium" });
const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

/** The time of day in the browser's locale, or a dash. */
export function clock(iso) {
  if (!iso) return "–";
  return TIME.format(new Date(iso));
}

/** Date and time, to the second, in the browser's locale. */
export function when(iso) {
  if (!iso) return "–";
  return DATE_TIME.format(new Date(iso));
}

/** Milliseconds as the largest sensible unit. */
export function duration(ms) {
  if (ms == null) return "–";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${+(ms / 60_000).toFixed(1)} min`;
  return `${+(ms / 3_600_000).toFixed(1)} h`;
}

/** A definition list from `[name, value]` pairs; a value may be a DOM node. */
export function definitions(pairs) {
  return pairs.map(([name, value]) => {
    const dd = value instanceof Node ? el("dd", {}, value) : el("dd", { text: value == null || value === "" ? "–" : value });
    return el("div", {}, el("dt", { text: name }), dd);
  });
}

/**
 * Runs `action` on a button press, showing its error. The button stays
 * focusable (a disabled one would drop the keyboard's focus) but ignores
 * presses while the action runs.
 */
export async function pressed(button, action) {
  if (button.getAttribute("aria-busy") === "true") return;
  button.setAttribute("aria-busy", "true");
  showError(null);
  try {
    await action();
  } catch (error) {
    showError(error);
  } finally {
    button.removeAttribute("aria-busy");
  }
}
