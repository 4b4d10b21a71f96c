// The endpoint form's subscription picker: the catalog's types as checkboxes
// by group (archived ones left out: they cannot be newly subscribed;
// deprecated ones marked), and a text box for patterns (`order.*`, `*`) and
// any other name. Ticked and typed names together are the endpoint's
// `event_types`. A name the catalog does not offer stays in the text box, so
// saving never drops it. With an empty catalog the text box is all there is.

import { el } from "./api.js";
import { allEventTypes, badge, byGroup, groupName } from "./event_types.js";

/** A comma list as names: trimmed, empty ones dropped. */
const split = (text) => text.split(",").map((t) => t.trim()).filter(Boolean);

/** The same names, whatever their order. */
const sameNames = (a, b) => [...a].sort().join("\n") === [...b].sort().join("\n");

/**
 * The picker's fieldset and its reader:
 * `{ element, load(), fill(names), read(), patch() }`.
 */
export function eventTypePicker() {
  const text = el("input", { name: "event_types", type: "text", autocomplete: "off", spellcheck: "false", placeholder: "order.*, invoice.paid (empty: all)" });
  const textLabel = el("span", { text: "Names and patterns" });
  const boxes = el("div", { class: "event-type-boxes", hidden: true });
  const note = el("p", { class: "note", hidden: true });
  const element = el(
    "fieldset",
    { class: "event-type-picker", "data-catalog": "none" },
    el("legend", { text: "Event types (none ticked or typed: all)" }),
    boxes,
    el("label", {}, textLabel, text),
    note,
    el("span", { class: "field-error", "data-field": "event_types", "data-prefix": "yes", "aria-live": "polite" }),
  );
  /** The names `fill` was given: the patch compares against them. */
  let shown = [];
  /** Bumped by each `load`: a slower, older answer is dropped. */
  let loads = 0;

  const ticks = () => [...boxes.querySelectorAll("input[type=checkbox]")];

  /** Ticks the offered names among `names`; the rest go in the text box. */
  function select(names) {
    const offered = new Set(ticks().map((box) => box.value));
    for (const box of ticks()) box.checked = names.includes(box.value);
    text.value = names.filter((n) => !offered.has(n)).join(", ");
  }

  /** The ticked names, then the typed ones not ticked as well. */
  function read() {
    const ticked = ticks().filter((box) => box.checked).map((box) => box.value);
    return [...ticked, ...split(text.value).filter((n) => !ticked.includes(n))];
  }

  /** Lays out `types` as checkboxes by group, keeping what is ticked and typed. */
  function lay(types) {
    const names = read();
    boxes.replaceChildren(
      ...byGroup(types).map(([group, list]) =>
        el(
          "div",
          { class: "event-type-group", role: "group", "aria-label": groupName(group), "data-group": group ?? "" },
          el("span", { class: "group-name", text: groupName(group) }),
          ...list.map((t) =>
            el(
              "label",
              { class: "inline", title: t.description || null },
              el("input", { type: "checkbox", value: t.name }),
              el("code", { text: t.name }),
              t.deprecated ? badge("deprecated") : null,
            ),
          ),
        ),
      ),
    );
    boxes.hidden = !types.length;
    textLabel.textContent = types.length ? "Patterns and other names" : "Names and patterns";
    select(names);
  }

  return {
    element,
    /** Reads the catalog again and lays out its subscribable types. */
    async load() {
      const mine = ++loads;
      element.dataset.catalog = "loading";
      try {
        const types = (await allEventTypes()).filter((t) => !t.archived);
        if (mine !== loads) return;
        lay(types);
        note.hidden = true;
        element.dataset.catalog = "loaded";
      } catch (error) {
        if (mine !== loads) return;
        // Without the catalog, names are typed as before.
        lay([]);
        note.textContent = `The event-type catalog could not be read (${error.message}): type the names.`;
        note.hidden = false;
        element.dataset.catalog = "failed";
      }
    },
    /** Shows an endpoint's names: the offered ones ticked, the rest typed. */
    fill(names) {
      shown = [...names];
      select(shown);
    },
    read,
    /** The patch's `event_types`: undefined when the names are as filled, null when none is left (all). */
    patch() {
      const names = read();
      if (sameNames(names, shown)) return undefined;
      return names.length ? names : null;
    },
  };
}
