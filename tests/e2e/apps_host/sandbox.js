// The sandbox proxy of the test host (another origin than the host page): it loads the view's HTML into an
// inner frame, which inherits this page's Content-Security-Policy (built by the test server from the view's
// declared csp, as the MCP Apps specification constructs it), and relays messages both ways.
const inner = document.createElement("iframe");
inner.setAttribute("sandbox", "allow-scripts allow-forms");
inner.style.cssText = "border:0;width:100%;height:100%;display:block";
document.body.append(inner);

window.addEventListener("message", ({ source, data }) => {
  if (source === window.parent) {
    if (data?.method === "ui/notifications/sandbox-resource-ready") {
      inner.srcdoc = data.params.html;
    } else if (!String(data?.method ?? "").startsWith("ui/notifications/sandbox-")) {
      inner.contentWindow?.postMessage(data, "*");
    }
  } else if (source === inner.contentWindow) {
    window.parent.postMessage(data, "*");
  }
});
window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, "*");
