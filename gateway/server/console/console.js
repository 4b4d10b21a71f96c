// hookgate console: plain ES module, talking only to this gateway's API v1.
// The token is kept in sessionStorage (this tab only) and sent as a bearer
// header; it never goes into a URL.

const store = window.sessionStorage;
const $ = (id) => document.getElementById(id);

/** Calls the API; resolves to the JSON body, or throws the API's error. */
async function api(path) {
  const response = await fetch(path, {
    headers: { authorization: `Bearer ${store.getItem("hookgate.token")}` },
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const error = body && body.error ? body.error : { code: `http_${response.status}`, message: response.statusText };
    throw error;
  }
  return body;
}

function showError(error) {
  const box = $("error");
  box.textContent = error ? `${error.message} (${error.code})` : "";
  box.hidden = !error;
}

function show(section) {
  for (const id of ["sign-in", "overview"]) {
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

async function route() {
  showError(null);
  if (!store.getItem("hookgate.token")) {
    show("sign-in");
    $("token").focus();
    return;
  }
  show("overview");
  try {
    await overview();
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
