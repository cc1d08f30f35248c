// The admin screens' little script: the navigation's menu on small screens, confirmations before a
// destructive form is sent, the command palette over GET api/search (keyboard: / or Ctrl/Cmd-K), and the
// suggestion buttons over POST api/ai/suggest. Every page works without it.
(function () {
  "use strict";
  var base = document.body.dataset.base || "";
  document.documentElement.classList.add("js");

  var toggle = document.querySelector(".menu-toggle");
  var side = document.getElementById("side");
  if (toggle && side) {
    toggle.addEventListener("click", function () {
      var open = side.classList.toggle("open");
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) { event.preventDefault(); }
  });

  // ---- command palette
  var palette = document.getElementById("palette");
  var input = document.getElementById("palette-q");
  var list = document.getElementById("palette-results");
  var kinds = { product: "Product", order: "Order", customer: "Customer", coupon: "Discount",
    category: "Category", collection: "Collection", blog_post: "Post" };
  var pages = { category: "/products", collection: "/products" };
  var timer = null;

  function hrefOf(hit) {
    if (pages[hit.type]) { return base + pages[hit.type]; }
    return base + hit.url;
  }

  function show(hits) {
    list.textContent = "";
    hits.forEach(function (hit, index) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = hrefOf(hit);
      if (index === 0) { a.className = "active"; }
      var kind = document.createElement("span");
      kind.className = "kind";
      kind.textContent = kinds[hit.type] || hit.type;
      var title = document.createElement("span");
      title.textContent = hit.title + (hit.subtitle ? " · " + hit.subtitle : "");
      a.appendChild(kind);
      a.appendChild(title);
      li.appendChild(a);
      list.appendChild(li);
    });
    if (!hits.length && input.value.trim()) {
      var none = document.createElement("li");
      none.className = "hint";
      none.textContent = "Nothing matches " + input.value.trim() + ".";
      list.appendChild(none);
    }
  }

  function search() {
    var q = input.value.trim();
    if (!q) { show([]); return; }
    fetch(base + "/api/search?limit=5&q=" + encodeURIComponent(q), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : { results: [] }; })
      .then(function (data) { if (input.value.trim() === q) { show(data.results || []); } })
      .catch(function () { show([]); });
  }

  function openPalette() {
    if (!palette || palette.open) { return; }
    palette.showModal();
    input.value = "";
    show([]);
    input.focus();
  }

  if (palette && input && list && typeof palette.showModal === "function") {
    input.addEventListener("input", function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(search, 150);
    });
    palette.querySelector("form").addEventListener("submit", function (event) {
      var first = list.querySelector("a.active") || list.querySelector("a");
      if (first) { event.preventDefault(); window.location.assign(first.href); }
    });
    palette.addEventListener("keydown", function (event) {
      var links = Array.prototype.slice.call(list.querySelectorAll("a"));
      var at = links.indexOf(list.querySelector("a.active"));
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        if (!links.length) { return; }
        if (at >= 0) { links[at].classList.remove("active"); }
        at = event.key === "ArrowDown" ? Math.min(at + 1, links.length - 1) : Math.max(at - 1, 0);
        links[at].classList.add("active");
      }
    });
    palette.addEventListener("click", function (event) { if (event.target === palette) { palette.close(); } });
    document.addEventListener("keydown", function (event) {
      var typing = /^(INPUT|TEXTAREA|SELECT)$/.test((event.target || {}).tagName || "") ||
        (event.target && event.target.isContentEditable);
      if ((event.key === "k" || event.key === "K") && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        openPalette();
      } else if (event.key === "/" && !typing) {
        event.preventDefault();
        openPalette();
      }
    });
    var find = document.getElementById("find-q");
    if (find) { find.addEventListener("focus", function () { find.blur(); openPalette(); }); }
  }

  // ---- suggestion buttons (POST api/ai/suggest): the first suggestion fills the field beside the button
  document.querySelectorAll("button[data-suggest]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var field = document.getElementById(button.getAttribute("data-suggest"));
      var titleField = document.getElementById("title");
      var title = titleField ? titleField.value.trim() : "";
      var task = button.getAttribute("data-task");
      var payload = { task: task, title: title };
      if (task === "alt_text") {
        var image = document.getElementById(button.getAttribute("data-image"));
        payload = { task: task, image_url: image ? image.value.trim() : "" };
        if (title) { payload.product_title = title; }
      }
      if (!field || (!title && task !== "alt_text") || (task === "alt_text" && !payload.image_url)) {
        (titleField || field).focus();
        return;
      }
      button.disabled = true;
      fetch(base + "/api/ai/suggest", {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload)
      }).then(function (r) { return r.ok ? r.json() : null; }).then(function (data) {
        var first = data && data.suggestions && data.suggestions[0];
        if (first) { field.value = first; field.focus(); }
      }).catch(function () { return null; }).then(function () { button.disabled = false; });
    });
  });

  // ---- Connect Stripe: the API answers the provider's authorization address, where the browser goes
  var connect = document.getElementById("connect-card");
  if (connect) {
    connect.hidden = false;
    connect.addEventListener("click", function () {
      var error = document.getElementById("connect-error");
      connect.disabled = true;
      fetch(connect.getAttribute("data-connect"), {
        method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" }, body: "{}"
      }).then(function (r) {
        return r.json().catch(function () { return {}; }).then(function (data) { return { ok: r.ok, data: data }; });
      }).then(function (result) {
        if (result.ok && result.data.url) { window.location.assign(result.data.url); return; }
        error.textContent = result.data.error || "Stripe could not be reached. Try again in a moment.";
        error.hidden = false;
        connect.disabled = false;
      }).catch(function () {
        error.textContent = "Stripe could not be reached. Try again in a moment.";
        error.hidden = false;
        connect.disabled = false;
      });
    });
  }
}());
