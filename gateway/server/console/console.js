// hookgate console: plain ES module, talking only to this gateway's API v1.
// The token is kept in sessionStorage (this tab only) and sent as a bearer
// header; it never goes into a URL.

const store = window.sessionStorage;
const $ = (id) => document.getElementById(id);

/** Calls the API; resolves to the JSON body, or throws the API's error. */
async function api(path, method = "GET", body = undefined) {
  const headers = { authorization: `Bearer ${store.getItem("hookgate.token")}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json().catch(() => null);
  if (!response.ok) {
    const error = answer && answer.error ? answer.error : { code: `http_${response.status}`, message: response.statusText };
    throw error;
  }
  return answer;
}

function showError(error) {
  const box = $("error");
  box.textContent = error ? `${error.message} (${error.code})` : "";
  box.hidden = !error;
}

function show(section) {
  for (const id of ["sign-in", "overview", "endpoints"]) {
    $(id).hidden = id !== section;
  }
  $("nav").hidden = section === "sign-in";
}

const percent = (x) => (x == null ? "–" : `${(x * 100).toFixed(1)} %`);
const latency = (x) => (x == null ? "–" : `${x} ms`);

async function overview() {
  const tenant = store.getItem("hookgate.tenant");
  const path = tenant ? `/v1/tenants/${encodeURIComponent(tenant)}/stats` : "/v1/stats";
  const stats = await api(path);
  const figures = [
    ["Success rate", percent(stats.success_rate)],
    ["Retry rate", percent(stats.retry_rate)],
    ["p95 attempt latency", latency(stats.latency_ms.p95)],
    ["p99 attempt latency", latency(stats.latency_ms.p99)],
    ["DLQ size", String(stats.dlq_size)],
    ["Pending", String(stats.deliveries.pending)],
  ];
  const list = $("figures");
  list.replaceChildren(
    ...figures.map(([name, value]) => {
      const item = document.createElement("div");
      const dt = document.createElement("dt");
      const dd = document.createElement("dd");
      dt.textContent = name;
      dd.textContent = value;
      item.append(dt, dd);
      return item;
    }),
  );
}

/** The signed-in tenant's API path prefix; pages about one tenant need it. */
function tenantPath() {
  const tenant = store.getItem("hookgate.tenant");
  if (!tenant) throw { code: "no_tenant", message: "Sign in with a tenant id to see its endpoints" };
  return `/v1/tenants/${encodeURIComponent(tenant)}`;
}

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text == null ? "–" : String(text);
  return td;
}

async function endpoints() {
  const page = await api(`${tenantPath()}/endpoints`);
  $("endpoint-list").replaceChildren(
    ...page.data.map((ep) => {
      const row = document.createElement("tr");
      const breaker = ep.breaker ? ep.breaker.state : null;
      row.append(
        cell(ep.id),
        cell(ep.url),
        cell(ep.disabled ? "disabled" : "enabled"),
        cell(breaker),
        cell(ep.max_in_flight),
        cell(ep.rate_limit_per_s),
      );
      return row;
    }),
  );
}

/** The create form's body: only the fields filled in. */
function endpointBody(form) {
  const value = (name) => form.elements[name].value.trim();
  const number = (name) => (value(name) === "" ? undefined : Number(value(name)));
  const body = { url: value("url") };
  const types = value("event_types");
  if (types) body.event_types = types.split(",").map((t) => t.trim()).filter(Boolean);
  if (number("max_in_flight") !== undefined) body.max_in_flight = number("max_in_flight");
  if (number("rate_limit_per_s") !== undefined) body.rate_limit_per_s = number("rate_limit_per_s");
  if (number("max_attempts") !== undefined) body.policy = { max_attempts: number("max_attempts") };
  return body;
}

/** Shows the API's error beside the field it names (its `field`), and above. */
function showFieldError(form, error) {
  for (const span of form.querySelectorAll(".field-error")) {
    span.textContent = error && span.dataset.field === error.field ? error.message : "";
  }
  showError(error);
}

$("endpoint-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  try {
    await api(`${tenantPath()}/endpoints`, "POST", endpointBody(form));
    showFieldError(form, null);
    form.reset();
    await endpoints();
  } catch (error) {
    showFieldError(form, error);
  }
});

async function route() {
  showError(null);
  if (!store.getItem("hookgate.token")) {
    show("sign-in");
    $("token").focus();
    return;
  }
  const page = window.location.hash === "#endpoints" ? "endpoints" : "overview";
  show(page);
  try {
    await (page === "endpoints" ? endpoints() : overview());
  } catch (error) {
    showError(error);
  }
}

$("sign-in-form").addEventListener("submit", (event) => {
  event.preventDefault();
  store.setItem("hookgate.token", $("token").value.trim());
  const tenant = $("tenant").value.trim();
  if (tenant) store.setItem("hookgate.tenant", tenant);
  else store.removeItem("hookgate.tenant");
  $("token").value = "";
  route();
});

$("sign-out").addEventListener("click", () => {
  store.clear();
  route();
});

window.addEventListener("hashchange", route);
route();
