// Editors of name/value rows for an endpoint's metadata and headers, with add
// and remove buttons. A header row can be marked sensitive: its value is typed
// into a password box, and a stored sensitive value arrives from the API as
// the mask `********` and is never shown otherwise. Each editor reads its rows
// as the API's create body, or as a merge patch against what it was filled with.

import { el } from "./api.js";

/** What the API shows in place of a sensitive header's value (api/endpoint_headers.rs). */
export const MASK = "********";

/**
 * One editor: `field` is the API's field (`metadata` or `headers`), `legend`
 * its title, `noun` what a row is; `sensitive` adds the checkbox column.
 * Returns `{ element, fill(map, sensitiveNames), read(), patch() }`.
 */
export function rowsEditor({ field, legend, noun, keyLabel, sensitive = false }) {
  const rows = el("div", { class: "rows", "data-rows": field });
  /** What `fill` put in: the patch compares against it. */
  let shown = { values: {}, sensitive: [] };

  function addRow(name = "", value = "", secret = false) {
    const valueBox = el("input", { type: secret ? "password" : "text", "aria-label": `${noun} value`, autocomplete: "off", spellcheck: "false", class: "row-value" });
    const nameBox = el("input", { type: "text", "aria-label": `${keyLabel}`, autocomplete: "off", spellcheck: "false", class: "row-name" });
    nameBox.value = name;
    valueBox.value = value;
    const row = el("div", { class: "row" }, nameBox, valueBox);
    if (sensitive) {
      const box = el("input", { type: "checkbox", class: "row-sensitive", checked: secret });
      // A sensitive value is typed unseen; the mask it arrives as is all it ever shows.
      box.addEventListener("change", () => (valueBox.type = box.checked ? "password" : "text"));
      row.append(el("label", { class: "inline" }, box, " sensitive"));
    }
    row.append(el("button", { type: "button", text: "Remove", "aria-label": `Remove this ${noun}`, on: { click: () => row.remove() } }));
    rows.append(row);
    return nameBox;
  }

  /** The rows with a name or a value: `[name, value, sensitive]`. */
  function entries() {
    return [...rows.querySelectorAll(".row")]
      .map((row) => [row.querySelector(".row-name").value.trim(), row.querySelector(".row-value").value, !!row.querySelector(".row-sensitive")?.checked])
      .filter(([name, value]) => name !== "" || value !== "");
  }

  const add = el("button", { type: "button", text: `Add ${noun}`, on: { click: () => addRow().focus() } });
  const element = el(
    "fieldset",
    { class: "rows-editor", "data-field": field },
    el("legend", { text: legend }),
    rows,
    add,
    el("span", { class: "field-error", "data-field": field, "data-prefix": "yes", "aria-live": "polite" }),
    sensitive ? el("span", { class: "field-error", "data-field": "sensitive_headers", "data-prefix": "yes", "aria-live": "polite" }) : null,
  );

  return {
    element,
    /** Lays out the stored rows (`map`: name → value, sensitive ones already masked). */
    fill(map = {}, sensitiveNames = []) {
      rows.replaceChildren();
      shown = { values: { ...map }, sensitive: [...sensitiveNames] };
      for (const [name, value] of Object.entries(map)) addRow(name, value, sensitiveNames.includes(name));
    },
    /** The create body's part: `{[field]: map}`, and the sensitive names; nothing when empty. */
    read() {
      const list = entries();
      if (!list.length) return {};
      const body = { [field]: Object.fromEntries(list.map(([n, v]) => [n, v])) };
      const secret = list.filter((e) => e[2]).map(([n]) => n);
      if (secret.length) body.sensitive_headers = secret;
      return body;
    },
    /**
     * The merge patch's part: a removed row is null, a changed or new one its
     * value, an untouched one left out. A masked value left as it is is not
     * sent, so the stored value stays (sending the mask back would keep it
     * too: docs/receivers.md). The sensitive names go whole when they changed.
     */
    patch() {
      const list = entries();
      const lower = (n) => (sensitive ? n.toLowerCase() : n);
      const now = new Map(list.map(([n, v]) => [lower(n), [n, v]]));
      const change = {};
      for (const name of Object.keys(shown.values)) if (!now.has(lower(name))) change[name] = null;
      for (const [key, [name, value]] of now) if (shown.values[key] !== value) change[name] = value;
      const body = Object.keys(change).length ? { [field]: change } : {};
      if (sensitive) {
        const names = list.filter((e) => e[2]).map(([n]) => lower(n)).sort();
        if (names.join("\n") !== [...shown.sensitive].sort().join("\n")) body.sensitive_headers = names;
      }
      return body;
    },
  };
}
