// hookgate console: sign-in and the router. Each page is a module with
// `show(arg, polled, current)`, and `poll` (ms) when it should be redrawn
// while open. The token
// is kept in sessionStorage (this tab only) and sent as a bearer header; it
// never goes into a URL. A portal session arrives in the address's fragment
// (`#portal=hgp_...`), which is taken out of the address at once; the
// session's capabilities say what shows, and its theme how it looks.

import { $, apiAs, pressed, setPortal, onSessionEnded, store, storeOutlivesReload, showError, showNotice, tenantChoices } from "./api.js";
import * as overview from "./overview.js";
import * as endpoints from "./endpoints.js";
import * as endpoint from "./endpoint.js";
import * as eventTypes from "./event_types.js";
import * as deliveries from "./deliveries.js";
import * as delivery from "./delivery.js";
import * as dlq from "./dlq.js";
import * as policies from "./policies.js";
import * as plugins from "./plugins.js";

/** `#name/arg` → the page's module; the nav item each belongs to. */
const PAGES = { overview, endpoints, endpoint, "event-types": eventTypes, deliveries, delivery, dlq, policies, plugins };
const NAV_OF = { endpoint: "endpoints", delivery: "deliveries" };

let timer = null;
/** Bumped on every route: an answer for a page left behind is dropped. */
let visit = 0;

function show(section) {
  for (const node of document.querySelectorAll("main > section")) node.hidden = node.id !== section;
  $("nav").hidden = section === "sign-in";
  for (const a of document.querySelectorAll("#nav a")) {
    const current = a.getAttribute("href") === `#${NAV_OF[section] || section}`;
    if (current) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

/**
 * Shows the page the address names. Its module's `show(arg, polled, current)`
 * renders only while `current()` holds; a polled page is drawn again `poll` ms
 * after the last drawing finished, so polls never overlap. The section is
 * `aria-busy` until its first drawing is done.
 */
async function route() {
  clearTimeout(timer);
  const mine = ++visit;
  const current = () => mine === visit;
  showError(null);
  showNotice(null);
  if (!store.getItem("hookgate.token")) {
    show("sign-in");
    $("token").focus();
    return;
  }
  const [name, ...rest] = window.location.hash.replace(/^#/, "").split("/");
  const page = PAGES[name] ? name : "overview";
  show(page);
  const section = $(page);
  const module = PAGES[page];
  section.setAttribute("aria-busy", "true");
  let failed = false;
  try {
    const arg = rest.length ? decodeURIComponent(rest.join("/")) : null;
    await module.show(arg, false, current);
    if (module.poll && current()) {
      const again = async () => {
        try {
          await module.show(arg, true, current);
          if (failed && current()) showError(null);
          failed = false;
        } catch (error) {
          failed = true;
          if (current()) showError(error);
        }
        if (current()) timer = setTimeout(again, module.poll);
      };
      timer = setTimeout(again, module.poll);
    }
  } catch (error) {
    if (current()) showError(error);
  } finally {
    if (current()) section.removeAttribute("aria-busy");
  }
}

/** Who is signed in, beside the nav: a tenant, or the admin with a tenant picker. */
async function showWho() {
  const admin = store.getItem("hookgate.admin") === "yes";
  const tenant = store.getItem("hookgate.tenant");
  $("who").textContent = admin ? "admin" : tenant ? `tenant ${tenant}` : "";
  $("tenant-pick").hidden = !admin;
  if (!admin) return;
  try {
    await tenantChoices($("tenant-select"), tenant);
  } catch (error) {
    showError(error);
  }
}

$("tenant-select").addEventListener("change", (event) => {
  const tenant = event.target.value;
  if (tenant) store.setItem("hookgate.tenant", tenant);
  else store.removeItem("hookgate.tenant");
  route();
});

/** The product name and title the console has without a theme. */
const PLAIN = { name: $("product-name").textContent, title: document.title };

/**
 * A portal session's look (or the plain one): its product name in the header
 * and the title, its logo (a `data:` URL), its accent colour as `--accent`,
 * and `data-mode` for its light or dark palette. Set through the DOM, which
 * the console's Content Security Policy allows (it has no inline style).
 */
function applyTheme(theme) {
  const t = theme || {};
  const root = document.documentElement;
  $("product-name").textContent = t.product_name || PLAIN.name;
  document.title = t.product_name || PLAIN.title;
  const logo = $("logo");
  if (t.logo_url && t.logo_url.startsWith("data:image/")) logo.src = t.logo_url;
  else logo.removeAttribute("src");
  logo.hidden = !logo.hasAttribute("src");
  if (t.accent_color && /^#[0-9a-fA-F]{6}$/.test(t.accent_color)) root.style.setProperty("--accent", t.accent_color);
  else root.style.removeProperty("--accent");
  if (t.mode === "dark" || t.mode === "light") root.dataset.mode = t.mode;
  else delete root.dataset.mode;
}

/** Forgets the token and the session in this tab; the theme stays until the next sign-in. */
function forget() {
  store.clear();
  setPortal(null);
}

/** What the sign-in form says of a portal session the API refused with 401 (expired or revoked). */
const endedError = (error) => ({
  code: "session_ended",
  message: `This portal session has ended (${error.message}); open the portal again from where you came`,
  status: 401,
});

/**
 * The first 401 the API answers the signed-in portal session: back to the
 * sign-in form, saying so. Answers the error every request of the session
 * then throws.
 */
function sessionEnded(error) {
  const ended = endedError(error);
  forget();
  route();
  showError(ended);
  return ended;
}

/** Starts the pages for the token kept in the tab, with its portal session (or null). */
function begin(session) {
  setPortal(session);
  applyTheme(session ? session.theme : null);
  if (session) onSessionEnded(sessionEnded);
  showWho();
  route();
}

/**
 * Checks `token` against the API, then keeps it and shows the pages: a
 * portal token reads its session (capabilities, theme); a tenant key reads
 * its tenant; a token signed in without a tenant reads the tenant list,
 * which only the admin may. Throws the API's error, keeping nothing.
 */
async function signIn(token, tenant) {
  forget();
  let session = null;
  if (token.startsWith("hgp_")) session = await apiAs(token, "/v1/portal-session");
  else if (tenant) await apiAs(token, `/v1/tenants/${encodeURIComponent(tenant)}`);
  else await apiAs(token, "/v1/tenants?limit=1");
  store.setItem("hookgate.token", token);
  const scope = session ? session.tenant_id : tenant;
  if (scope) store.setItem("hookgate.tenant", scope);
  // Signed in without a tenant: the admin token, which may look at any tenant.
  store.setItem("hookgate.admin", scope ? "no" : "yes");
  begin(session);
}

/** Signs in with `token`; a refused one leaves the sign-in form with the API's error. */
async function attempt(token, tenant) {
  try {
    await signIn(token, tenant);
  } catch (error) {
    forget();
    route();
    throw error;
  }
}

$("sign-in-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const token = $("token").value.trim();
  const tenant = $("tenant").value.trim();
  $("token").value = "";
  pressed(event.target.querySelector("button[type=submit]"), () => attempt(token, tenant));
});

// A reload leaves nothing of the last tenant's pages in this tab.
$("sign-out").addEventListener("click", () => {
  store.clear();
  window.location.replace(window.location.pathname);
});

/**
 * The portal token in the address (`#portal=hgp_...`), taken out of it at
 * once: neither the address bar nor the history entry keeps it.
 */
function takePortalToken() {
  const token = new URLSearchParams(window.location.hash.replace(/^#/, "")).get("portal");
  if (!token) return null;
  window.history.replaceState(window.history.state, "", window.location.pathname + window.location.search);
  return token;
}

/** Signs in with a portal token from the address, showing a refusal on the sign-in form. */
function portalFromAddress(token) {
  attempt(token, "").catch(showError);
}

window.addEventListener("hashchange", () => {
  const token = takePortalToken();
  if (token) portalFromAddress(token);
  else route();
});

if (!storeOutlivesReload) {
  $("sign-in-note").textContent =
    "This browser keeps nothing for this frame: a session lasts until the page is reloaded. Open the portal again from where you came.";
}

const arrived = takePortalToken();
const kept = store.getItem("hookgate.token");
if (arrived) portalFromAddress(arrived);
else if (kept && kept.startsWith("hgp_")) {
  // A reload of this tab: the session is read again (it may have ended).
  apiAs(kept, "/v1/portal-session").then(begin, (error) => {
    if (error.status === 401) {
      forget();
      route();
      showError(endedError(error));
    } else {
      // Not read (the gateway did not answer): the token stays, for the next reload.
      show("sign-in");
      showError(error);
    }
  });
} else {
  if (kept) showWho();
  route();
}
