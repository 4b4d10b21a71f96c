// Plugins: the tenant's plugins (retry policies and transforms), each version
// with its upload checks' results and its runs on this gateway, upload from a
// file picker, rollback to the version before, and the endpoints bound to each
// (bind and unbind edit the endpoint's `plugin`, or `transform` for a transform).

import { $, api, tenantPath, el, cell, when, pressed, showNotice } from "./api.js";
import { showFieldError } from "./forms.js";
import { allEndpoints } from "./endpoints.js";

const upload = $("plugin-upload");
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;

function checksText(checks) {
  if (!checks) return "–";
  return `${checks.passed.length} passed (${checks.passed.join(", ")}); fuel ${checks.fuel_used} of ${checks.fuel_limit}; memory ${kib(checks.memory_used_bytes)} of ${kib(checks.memory_limit_bytes)}`;
}

function runsText(runs) {
  if (!runs || runs.count === 0) return "none yet";
  const parts = [`${runs.count} runs`, `${runs.failed} failed`];
  if (runs.skipped) parts.push(`${runs.skipped} skipped`);
  parts.push(`mean ${Math.round(runs.time_us / runs.count)} µs`);
  return parts.join(", ");
}

/** The endpoint field that binds a plugin of this kind. */
const bindingField = (plugin) => (plugin.kind === "transform" ? "transform" : "plugin");

function versionRow(v) {
  const state = [v.active ? "active" : null, v.loaded ? "loaded" : null, v.disabled ? "disabled" : null].filter(Boolean).join(", ");
  return el(
    "tr",
    { "data-version": v.version },
    cell(v.version),
    cell(state || "kept"),
    cell(v.consecutive_failures),
    cell(checksText(v.checks)),
    cell(runsText(v.runs)),
    cell(`${kib(v.size)}, sha256 ${v.sha256.slice(0, 12)}…`),
    cell(when(v.created_at)),
  );
}

/** PATCHes an endpoint's `field` binding (`plugin` or `transform`), then redraws. */
async function bind(endpointId, field, plugin) {
  const path = `${tenantPath()}/endpoints/${encodeURIComponent(endpointId)}`;
  await api(path, "PATCH", { [field]: plugin }, "application/merge-patch+json");
  await show();
  const unbound = field === "transform" ? "it sends what hookgate builds" : "its policy decides";
  const now = field === "transform" ? `${endpointId} now runs ${plugin} before signing.` : `${endpointId} now asks ${plugin}.`;
  showNotice(plugin ? now : `${endpointId} is unbound: ${unbound}.`);
}

function pluginCard(plugin, endpoints) {
  const field = bindingField(plugin);
  const bound = endpoints.filter((ep) => ep[field] === plugin.name || (ep[field] || "").startsWith(`${plugin.name}@`));
  const rollback = el("button", { type: "button", text: "Roll back", "data-plugin": plugin.name, "data-needs": "manage_plugins", disabled: plugin.versions.length < 2 });
  rollback.addEventListener("click", () =>
    pressed(rollback, async () => {
      const after = await api(`${tenantPath()}/plugins/${encodeURIComponent(plugin.name)}/rollback`, "POST");
      await show();
      showNotice(`${after.name} is back at version ${after.active_version}.`);
    }),
  );
  const unboundChoices = endpoints.filter((ep) => !bound.includes(ep));
  const picker = el("select", { "aria-label": `Endpoint to bind to ${plugin.name}`, "data-needs": "manage_endpoints" }, ...unboundChoices.map((ep) => el("option", { value: ep.id, text: ep.id })));
  // Binding edits the endpoint: a portal session needs manage_endpoints for it.
  const bindButton = el("button", { type: "button", text: "Bind", disabled: unboundChoices.length === 0, "data-bind": plugin.name, "data-needs": "manage_endpoints" });
  bindButton.addEventListener("click", () => pressed(bindButton, () => bind(picker.value, field, plugin.name)));
  const bindings = bound.map((ep) => {
    const unbind = el("button", { type: "button", text: "Unbind", "data-unbind": ep.id, "data-needs": "manage_endpoints" });
    unbind.addEventListener("click", () => pressed(unbind, () => bind(ep.id, field, null)));
    return el("li", {}, `${ep.id} (${ep[field]}) `, unbind);
  });
  return el(
    "article",
    { class: "plugin", "data-plugin": plugin.name },
    el("h3", { text: `${plugin.name}: ${plugin.kind || "plugin"}, version ${plugin.active_version} active${plugin.disabled ? ", disabled" : ""} (${plugin.source})` }),
    el(
      "table",
      {},
      el("thead", {}, el("tr", {}, ...["Version", "State", "Failures in a row", "Checks", "Runs here", "Size", "Uploaded"].map((h) => el("th", { text: h })))),
      el("tbody", {}, ...plugin.versions.map(versionRow)),
    ),
    el("p", { class: "actions" }, rollback),
    el("h4", { text: "Bound endpoints" }),
    el("ul", { class: "bindings" }, ...(bindings.length ? bindings : [el("li", { class: "empty", text: "None: no endpoint asks this plugin." })])),
    el("p", { class: "actions" }, picker, " ", bindButton),
  );
}

export async function show(_arg, _polled, current = () => true) {
  const [plugins, endpoints] = await Promise.all([api(`${tenantPath()}/plugins`), allEndpoints()]);
  if (!current()) return;
  $("plugin-list").replaceChildren(
    ...(plugins.data.length
      ? plugins.data.map((p) => pluginCard(p, endpoints))
      : [el("p", { class: "empty", text: "No plugins yet: upload a WebAssembly component built with the plugin SDK." })]),
  );
}

upload.addEventListener("submit", (event) => {
  event.preventDefault();
  pressed(upload.querySelector("button[type=submit]"), async () => {
    const name = upload.elements.name.value.trim();
    const file = upload.elements.file.files[0];
    if (!file) throw { code: "no_file", message: "Choose a .wasm file to upload" };
    try {
      const bytes = await file.arrayBuffer();
      const answer = await api(`${tenantPath()}/plugins/${encodeURIComponent(name)}`, "PUT", bytes, "application/wasm");
      showFieldError(upload, null);
      upload.reset();
      await show();
      showNotice(`Uploaded ${answer.name} version ${answer.version}: ${checksText(answer.checks)}.`);
    } catch (error) {
      showFieldError(upload, error);
    }
  });
});
