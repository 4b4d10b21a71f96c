// hookgate console: sign-in and the router. Each page is a module with
// `show(arg, polled, current)`, and `poll` (ms) when it should be redrawn
// while open. The token
// is kept in sessionStorage (this tab only) and sent as a bearer header; it
// never goes into a URL.

import { $, store, showError, showNotice, tenantChoices } from "./api.js";
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

$("sign-in-form").addEventListener("submit", (event) => {
  event.preventDefault();
  store.setItem("hookgate.token", $("token").value.trim());
  const tenant = $("tenant").value.trim();
  if (tenant) store.setItem("hookgate.tenant", tenant);
  else store.removeItem("hookgate.tenant");
  // Signed in without a tenant: the admin token, which may look at any tenant.
  store.setItem("hookgate.admin", tenant ? "no" : "yes");
  $("token").value = "";
  showWho();
  route();
});

// A reload leaves nothing of the last tenant's pages in this tab.
$("sign-out").addEventListener("click", () => {
  store.clear();
  window.location.replace(window.location.pathname);
});

if (store.getItem("hookgate.token")) showWho();
window.addEventListener("hashchange", route);
route();
