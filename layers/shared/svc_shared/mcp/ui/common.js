/** An element with attributes (on* are listeners) and children (strings become text, never HTML). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A tool result's data: its structured content, or the JSON of its text; an error result throws its words. */
function resultData(result) {
  const text = result?.content?.find((c) => c.type === "text")?.text ?? "";
  if (result?.isError) throw new Error(text || "The tool call failed.");
  if (result?.structuredContent) return result.structuredContent;
  try { return JSON.parse(text); } catch { return null; }
}

/** The host's theme and style variables, as the specification's context carries them. */
function applyContext(context) {
  const root = document.documentElement;
  if (context?.theme === "light" || context?.theme === "dark") {
    root.setAttribute("data-theme", context.theme);
    root.style.colorScheme = context.theme;
  }
  for (const [name, value] of Object.entries(context?.styles?.variables ?? {})) {
    if (name.startsWith("--") && typeof value === "string") root.style.setProperty(name, value);
  }
}

/** Connects the view to its host; `handlers` get the tool's input and result as the host sends them. */
async function connectView(name, handlers) {
  const host = new Host({ name, version: "1.0.0" }, { ...handlers, context: applyContext });
  await host.connect();
  applyContext(host.context);
  return host;
}

/** Calls one of this server's tools through the host (the host holds the connection and the token). */
async function callTool(host, name, args) {
  return resultData(await host.callTool(name, args));
}

/** A link the host opens (a sandboxed view cannot navigate). */
function hostLink(host, url, text, attrs = {}) {
  return el("a", {
    href: url, target: "_blank", rel: "noopener", ...attrs,
    onclick: (event) => { event.preventDefault(); host.openLink(url).catch(() => {}); },
  }, text);
}

function showStatus(text, kind = "muted") {
  const status = document.getElementById("status");
  status.className = kind;
  status.textContent = text;
}
