// JSON kept as text: a member's value cut out of an object's text, and text
// laid out with indentation. An event's payload is shown as it was received,
// so it is never parsed into JavaScript values, which would round large
// numbers, reorder integer-like keys and drop repeated ones.

/** Where the JSON value starting at `at` ends (just past it). */
function valueEnd(text, at) {
  let depth = 0;
  let i = at;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      i = stringEnd(text, i) - 1;
      if (depth === 0) return i + 1;
    } else if (c === "{" || c === "[") depth += 1;
    else if (c === "}" || c === "]") {
      depth -= 1;
      if (depth === 0) return i + 1;
      if (depth < 0) return i;
    } else if (c === "," && depth === 0) return i;
  }
  return i;
}

/** Where the string starting at `at` (its opening quote) ends (just past it). */
function stringEnd(text, at) {
  let i = at + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
  return i + 1;
}

const skipSpace = (text, at) => {
  while (at < text.length && /\s/.test(text[at])) at += 1;
  return at;
};

/** The text of the value of the top-level object's member `key`, or null. */
export function memberText(objectText, key) {
  let i = skipSpace(objectText, 0);
  if (objectText[i] !== "{") return null;
  i += 1;
  while (i < objectText.length) {
    i = skipSpace(objectText, i);
    if (objectText[i] !== '"') return null;
    const nameEnd = stringEnd(objectText, i);
    const name = JSON.parse(objectText.slice(i, nameEnd));
    i = skipSpace(objectText, nameEnd);
    if (objectText[i] !== ":") return null;
    const start = skipSpace(objectText, i + 1);
    const end = valueEnd(objectText, start);
    if (name === key) return objectText.slice(start, end).trim();
    i = skipSpace(objectText, end);
    if (objectText[i] !== ",") return null;
    i += 1;
  }
  return null;
}

/** `text` (valid JSON) laid out two spaces a level; strings and numbers as written. */
export function indentJson(text) {
  let out = "";
  let depth = 0;
  const newline = () => `\n${"  ".repeat(depth)}`;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end - 1;
    } else if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      const next = skipSpace(text, i + 1);
      // An empty object or list stays on one line.
      if (text[next] === close) {
        out += c + close;
        i = next;
      } else {
        depth += 1;
        out += c + newline();
      }
    } else if (c === "}" || c === "]") {
      depth -= 1;
      out += newline() + c;
    } else if (c === ",") out += `,${newline()}`;
    else if (c === ":") out += ": ";
    else if (!/\s/.test(c)) out += c;
  }
  return out;
}
