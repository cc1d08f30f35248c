// The workspace's small amount of script: connect popups, disconnect without a reload, publish progress.
// Every page works without it (forms post, links navigate); this only spares reloads.
(function () {
  "use strict";
  var body = document.body;
  var base = body.dataset.base || "";
  var csrf = body.dataset.csrf || "";
  document.documentElement.classList.add("js");

  // ---- New shop: the button opens the form in place (without script, it is a link that does the same)
  var newButton = document.getElementById("new-shop-button");
  var newShop = document.getElementById("new-shop");
  if (newButton && newShop) {
    newButton.addEventListener("click", function (event) {
      event.preventDefault();
      newShop.open = true;
      newShop.scrollIntoView({ block: "start" });
      var first = newShop.querySelector("input[type=radio]:checked");
      if (first) { first.focus(); }
    });
  }

  // ---- the navigation as a menu on a phone (CSS shows the button only on narrow screens)
  var toggle = document.querySelector(".menu-toggle");
  if (toggle) {
    toggle.hidden = false;
    toggle.addEventListener("click", function () {
      var open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
      toggle.closest(".top").classList.toggle("open", open);
    });
  }

  function api(method, path, payload) {
    var options = { method: method, credentials: "same-origin", headers: { "Accept": "application/json" } };
    if (payload !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.headers["X-CSRF-Token"] = csrf;
      options.body = JSON.stringify(payload);
    }
    return fetch(base + path, options).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        return { ok: response.ok, status: response.status, data: data };
      });
    });
  }

  function messageOf(result) {
    var data = result.data || {};
    return data.message || data.error || "Something went wrong. Try again.";
  }

  // ---- parts of a page drawn again from the server (this page's URL), e.g. once a publish is ready. What the
  // person typed in a field of a part drawn again stays typed (and focused), e.g. a builder message begun
  // while the page follows a deploy.
  function keepTyped(old, next) {
    old.querySelectorAll("textarea[id], input[id]:not([type=hidden]):not([type=checkbox]):not([type=radio])")
      .forEach(function (field) {
        if (field.value === field.defaultValue) { return; }
        var same = next.querySelector("#" + CSS.escape(field.id));
        if (!same || same.tagName !== field.tagName) { return; }
        same.value = field.value;
        if (document.activeElement === field) { window.setTimeout(function () { same.focus(); }, 0); }
      });
  }

  function refreshParts(ids) {
    return fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (html === null) { return; }
        var fresh = new DOMParser().parseFromString(html, "text/html");
        ids.forEach(function (id) {
          var now = document.getElementById(id);
          var next = fresh.getElementById(id);
          if (!now || !next) { return; }
          next = document.importNode(next, true);
          keepTyped(now, next);
          now.replaceWith(next);
        });
      })
      .catch(function () { return null; });
  }

  // Parts marked data-refresh="<seconds>" (a pending payment, the last 5 minutes) are redrawn while marked,
  // with those named in data-refresh-with (the balance).
  function keepFresh(id) {
    var el = document.getElementById(id);
    if (!el || !el.dataset.refresh) { return; }
    window.setTimeout(function () {
      var also = (el.dataset.refreshWith || "").split(" ").filter(Boolean);
      refreshParts([id].concat(also)).then(function () { keepFresh(id); });
    }, Math.max(1, parseInt(el.dataset.refresh, 10) || 30) * 1000);
  }
  document.querySelectorAll("[data-refresh][id]").forEach(function (el) { keepFresh(el.id); });

  // A checkout ready on the provider's page: go on to it (without script, its link is followed).
  var go = document.querySelector("a[data-go=yes]");
  if (go) { window.location.assign(go.href); }

  // ---- copy buttons
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var field = document.getElementById(button.dataset.copy);
      field.select();
      if (navigator.clipboard) { navigator.clipboard.writeText(field.value); }
      button.textContent = "Copied";
    });
  });

  // ---- connections
  function card(provider) { return document.getElementById("card-" + provider); }

  function showCard(provider, connected, account, error) {
    var el = card(provider);
    if (!el) { return; }
    el.dataset.connected = connected ? "yes" : "no";
    var status = el.querySelector(".status");
    status.textContent = "";
    var word = document.createElement("span");
    word.className = connected ? "ok" : "off";
    word.textContent = connected ? "Connected" : "Not connected";
    status.appendChild(word);
    if (connected && account) {
      status.appendChild(document.createTextNode(" as "));
      var strong = document.createElement("strong");
      strong.className = "account";
      strong.textContent = account;
      status.appendChild(strong);
    }
    var alert = el.querySelector(".error");
    alert.textContent = error || "";
    alert.hidden = !error;
    el.querySelector(".connect").hidden = connected;
    el.querySelector(".disconnect").hidden = !connected;
  }

  function refreshCards() {
    return api("GET", "/workspace/connections/state").then(function (result) {
      if (!result.ok) { return; }
      Object.keys(result.data.connections).forEach(function (provider) {
        var c = result.data.connections[provider];
        showCard(provider, c.connected, c.account, null);
      });
    });
  }

  var waiting = null;
  window.addEventListener("message", function (event) {
    // Only the callback page of this origin may report a connection result.
    if (event.origin !== window.location.origin) { return; }
    var result = event.data;
    if (!result || result.type !== "svc-oauth-result") { return; }
    var provider = result.provider || waiting;
    waiting = null;
    if (result.ok) {
      refreshCards();
    } else if (provider) {
      var el = card(provider);
      var alert = el && el.querySelector(".error");
      if (alert) { alert.textContent = result.message; alert.hidden = false; }
    }
  });

  document.querySelectorAll("a.connect").forEach(function (link) {
    link.addEventListener("click", function (event) {
      event.preventDefault();
      var provider = link.dataset.provider;
      var sameTab = link.dataset.sameTab === "yes";
      // Open the popup in the click itself (browsers allow popups only there), then point it at the provider.
      var popup = sameTab ? null : window.open("", "svc-connect", "popup,width=600,height=700");
      api("GET", "/api/oauth/initiate?provider=" + encodeURIComponent(provider)).then(function (result) {
        if (!result.ok) {
          if (popup) { popup.close(); }
          var alert = card(provider).querySelector(".error");
          alert.textContent = messageOf(result);
          alert.hidden = false;
          return;
        }
        if (popup && !popup.closed) {
          waiting = provider;
          popup.location.href = result.data.url;
        } else {
          window.location.href = result.data.url; // the panel flow, or a blocked popup: the same tab
        }
      });
    });
  });

  // Revoke: the browser's own confirmation instead of the tick box (the server still needs confirm=yes).
  document.querySelectorAll("form.revoke").forEach(function (form) {
    var box = form.querySelector("input[name=confirm]");
    if (box) { box.required = false; box.closest("label").hidden = true; }
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.dataset.confirm)) { event.preventDefault(); return; }
      if (box) { box.checked = true; }
    });
  });

  document.querySelectorAll("form.disconnect").forEach(function (form) {
    var box = form.querySelector("input[name=confirm]");
    if (box) { box.required = false; }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (!window.confirm(form.dataset.confirm)) { return; }
      var provider = form.querySelector("input[name=provider]").value;
      api("POST", "/api/oauth/disconnect", { provider: provider }).then(function (result) {
        if (result.ok) { showCard(provider, false, null, null); }
        else { showCard(provider, true, null, messageOf(result)); }
      });
    });
  });

  // ---- the project page follows its state without a reload: the state route gives a version of each part
  // (data-part), and a part whose version changed is drawn again from the page; often while a publish, a
  // deploy or a builder message is on its way, seldom otherwise, never while the tab is hidden. Without
  // script, the page's Refresh link does the same.
  var followed = document.querySelector("[data-part][data-version]");
  var publishSection = document.getElementById("publish");
  var renderPublish = null;
  var followTimer = null;
  var checking = false; // one check at a time: two would both draw the parts they saw change
  var checkAgain = false;

  function follow(delay) {
    if (!followed || !publishSection) { return; }
    window.clearTimeout(followTimer);
    followTimer = window.setTimeout(checkState, delay);
  }

  function checked(delay) {
    checking = false;
    if (checkAgain) { checkAgain = false; delay = 0; }
    if (delay !== null) { follow(delay); }
  }

  function checkState() {
    if (document.hidden) { return; } // picked up again when the tab is shown
    if (checking) { checkAgain = true; return; }
    checking = true;
    var path = "/workspace/projects/" + encodeURIComponent(publishSection.dataset.project) + "/state";
    api("GET", path).then(function (result) {
      if (!result.ok) { // a passing fault: ask again later; gone or no longer shared: the page stays as it is
        checked(result.status >= 500 ? 15000 : null);
        return;
      }
      var versions = result.data.versions || {};
      var changed = [];
      document.querySelectorAll("[data-part][data-version]").forEach(function (el) {
        var version = versions[el.dataset.part];
        if (version && version !== el.dataset.version) { changed.push(el.id); }
      });
      var report = result.data.publish;
      if (renderPublish && report && (report.status !== publishSection.dataset.status ||
          report.stage !== publishSection.dataset.stage)) { renderPublish(report); }
      var next = result.data.poll_after_ms || 15000;
      if (document.querySelector("#builder-message[data-status=in_progress]")) { next = Math.min(next, 3000); }
      (changed.length ? refreshParts(changed) : Promise.resolve()).then(function () { checked(next); });
    }).catch(function () { checked(15000); });
  }

  document.addEventListener("visibilitychange", function () { if (!document.hidden) { follow(0); } });
  follow(3000);

  // ---- publish
  var section = publishSection;
  if (section) {
    var projectId = section.dataset.project;
    var form = document.getElementById("publish-form");
    var button = document.getElementById("publish-button");
    var words = document.getElementById("publish-words");
    var errorBox = document.getElementById("publish-error");
    var timer = null;
    var labels = { done: "done", current: "in progress", failed: "failed", waiting: "waiting" };
    var wasDone = section.dataset.status === "ready";

    var render = function (report) {
      section.dataset.status = report.status;
      section.dataset.stage = report.stage;
      var steps = section.querySelectorAll(".step");
      var reached = -1;
      steps.forEach(function (li, i) { if (li.dataset.stage === report.stage) { reached = i; } });
      steps.forEach(function (li, i) {
        var state = "waiting";
        if (report.status !== "not_started") {
          if (i < reached || (li.dataset.stage === "ready" && report.done)) { state = "done"; }
          else if (i === reached) { state = report.status === "failed" ? "failed" : "current"; }
        }
        li.className = "step step-" + state;
        li.dataset.state = state;
        li.querySelector(".sr").textContent = "(" + labels[state] + ")";
      });
      var text = { not_started: "Not published", starting: "Publishing", running: "Publishing",
                   failed: "Publish failed", ready: "Live" }[report.status] || report.status;
      words.textContent = text;
      words.className = "state state-" + report.status;
      errorBox.textContent = report.error || "";
      errorBox.hidden = !report.error;
      if (report.done && report.live_url) {
        var live = document.getElementById("live");
        live.textContent = "";
        var a = document.createElement("a");
        a.href = report.live_url;
        a.textContent = report.live_url;
        a.rel = "noopener";
        a.target = "_blank";
        live.appendChild(a);
      }
      var running = report.status === "running" || report.status === "starting";
      var setup = document.getElementById("setup");
      if (setup) { setup.hidden = running; }
      if (report.done && !wasDone) { follow(0); } // repository, commit, backoffice, builder, link forms
      wasDone = !!report.done;
      if (form) {
        form.hidden = !!report.done;
        button.disabled = report.status === "running" || report.status === "starting";
        button.textContent = report.status === "failed" ? "Retry" : "Publish";
      }
    };

    renderPublish = render;

    var poll = function () {
      api("POST", "/api/projects/" + encodeURIComponent(projectId) + "/provision", { action: "status" })
        .then(function (result) {
          if (!result.ok) { errorBox.textContent = messageOf(result); errorBox.hidden = false; return; }
          render(result.data);
          if (result.data.status === "running" || result.data.status === "starting") {
            timer = window.setTimeout(poll, result.data.poll_after_ms || 3000);
          }
        });
    };

    if (form) {
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        button.disabled = true;
        window.clearTimeout(timer);
        api("POST", "/api/projects/" + encodeURIComponent(projectId) + "/provision", { action: "start" })
          .then(function (result) {
            if (!result.ok) {
              button.disabled = false;
              errorBox.textContent = messageOf(result);
              errorBox.hidden = false;
              return;
            }
            render(result.data);
            if (!result.data.done) { timer = window.setTimeout(poll, result.data.poll_after_ms || 3000); }
          });
      });
    }
    // A run already going when the page opens is picked up.
    if (section.dataset.status === "running" || section.dataset.status === "starting") {
      timer = window.setTimeout(poll, 3000);
    }
  }
})();
