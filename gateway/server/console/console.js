// hookgate console: sign-in and the router. Each page is a module with
// `show(arg)`, and `poll` (ms) when it should be redrawn while open. The token
// is kept in sessionStorage (this tab only) and sent as a bearer header; it
// never goes into a URL.

import { $, store, showError, showNotice } from "./api.js";
import * as overview from "./overview.js";
import * as endpoints from "./endpoints.js";
import * as endpoint from "./endpoint.js";
import * as deliveries from "./deliveries.js";
import * as delivery from "./delivery.js";
import * as dlq from "./dlq.js";
import * as policies from "./policies.js";
import * as plugins from "./plugins.js";

/** `#name/arg` → the page's module; the nav item each belongs to. */
const PAGES = { overview, endpoints, endpoint, deliveries, delivery, dlq, policies, plugins };
const NAV_OF = { endpoint: "endpoints", delivery: "deliveries" };

let timer = null;
/** Bumped on every route, so a slow answer for a page left behind is dropped. */
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

async function route() {
  clearInterval(timer);
  const mine = ++visit;
  showError(null);
  showNotice(null);
  if (!store.getItem("hookgate.token")) {
    show("sign-in");
    $("token").focus();
    return;
  }
  const [name, ...rest] = window.location.hash.replace(/^#/, "").split("/");
  const page = PAGES[name] ? name : "overview";
  const arg = rest.length ? decodeURIComponent(rest.join("/")) : null;
  show(page);
  const module = PAGES[page];
  try {
    await module.show(arg);
  } catch (error) {
    if (mine === visit) showError(error);
  }
  if (module.poll && mine === visit) {
    timer = setInterval(async () => {
      if (document.hidden) return;
      try {
        await module.show(arg, true);
      } catch (error) {
        if (mine === visit) showError(error);
      }
    }, module.poll);
  }
}

$("sign-in-form").addEventListener("submit", (event) => {
  event.preventDefault();
  store.setItem("hookgate.token", $("token").value.trim());
  const tenant = $("tenant").value.trim();
  if (tenant) store.setItem("hookgate.tenant", tenant);
  else store.removeItem("hookgate.tenant");
  $("token").value = "";
  $("who").textContent = tenant ? `tenant ${tenant}` : "admin";
  route();
});

$("sign-out").addEventListener("click", () => {
  store.clear();
  overview.forget();
  window.location.hash = "";
  route();
});

$("who").textContent = store.getItem("hookgate.tenant") ? `tenant ${store.getItem("hookgate.tenant")}` : "admin";
window.addEventListener("hashchange", route);
route();
