// The payload filter editor: a JSON text box, an example to start from, and
// the API's refusal beside it. The API names the place in the filter that is
// wrong (`filter.$or[1].amount.$gt`); forms.js shows that place with the
// message. Text that is not JSON at all is refused here, before sending.

import { el } from "./api.js";

/** The example of docs/payload-filters.md: one customer's invoices over 100 EUR. */
const EXAMPLE = { "data.customer.id": "cus_42", "data.currency": "EUR", "data.amount": { $gt: 100 } };

/** Editors made so far: each one's help line gets an id of its own. */
let made = 0;

/** A filter as the editor shows it: two-space JSON, or empty for none. */
export const filterText = (filter) => (filter == null ? "" : JSON.stringify(filter, null, 2));

/** The editor's field: the text box named `filter`, the example button, the error line. */
export function filterEditor() {
  const help = `filter-help-${++made}`;
  const box = el("textarea", {
    name: "filter",
    rows: 6,
    spellcheck: "false",
    autocomplete: "off",
    class: "json",
    placeholder: '{"data.amount": {"$gt": 100}}',
    "aria-describedby": help,
  });
  const example = el("button", {
    type: "button",
    text: "Example",
    "aria-label": "Put an example filter in the box",
    on: {
      click: () => {
        box.value = filterText(EXAMPLE);
        box.focus();
      },
    },
  });
  return el(
    "div",
    { class: "field filter-editor" },
    el("label", {}, "Payload filter (JSON) ", box),
    el(
      "p",
      { class: "note", id: help },
      "Empty: every event its types and channels match. Operators: $eq $neq $in $nin $gt $gte $lt $lte $exists $and $or $not, on dotted paths. ",
      example,
    ),
    el("span", { class: "field-error", "data-field": "filter", "data-prefix": "yes", "aria-live": "polite" }),
  );
}

/** The filter in `form`: undefined when empty, the parsed JSON otherwise; throws the API's kind of error when it is not JSON. */
export function readFilter(form) {
  const text = form.elements.filter.value.trim();
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw { code: "validation_failed", field: "filter", message: `the filter is not JSON: ${e.message}` };
  }
}
