// The builder's progress (polling each message as get_message does), the live preview's reloads, and the
// knowledge byte counter. The pages work without it: a Refresh link, reloading the page, the server's count.
(function () {
  "use strict";

  // ---- the live preview (builder page): Reload, and a reload once a builder commit is live. The preview is
  // looked up when used: while the site's first build runs, the part is drawn again (data-refresh) until it
  // frames the live site.
  var previewFrame = function () { return document.getElementById("preview-frame"); };
  var reloadPreview = function () {
    var frame = previewFrame();
    if (frame) { frame.src = frame.getAttribute("src"); }
  };
  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("#preview-reload")) { reloadPreview(); }
  });
  var previewSays = function (text) {
    var state = document.getElementById("preview-state");
    if (state && previewFrame()) { state.textContent = text; }
  };

  // ---- builder messages: follow each until it is complete or has failed (then, beside a preview, until
  // its commit is live); `settled` is a message already complete when the page was drawn.
  var follow = function (box, settled) {
    var part = function (name) { return box.querySelector("." + name); };
    var show = function (name, text) {
      var el = part(name);
      el.textContent = text || "";
      el.hidden = !text;
    };
    var waits = 0;
    var poll = function () {
      var frame = previewFrame();
      fetch(box.dataset.poll + (frame ? "?live=1" : ""),
            { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (response) {
          return response.json().then(function (data) { return { ok: response.ok, data: data }; });
        })
        .then(function (result) {
          var m = result.data || {};
          if (!result.ok) {
            show("message-error", m.message || "The builder's state could not be read. Use Refresh.");
            return;
          }
          var words = part("message-words");
          words.textContent = m.words;
          words.className = "message-words state state-" + m.status;
          box.dataset.status = m.status;
          if (m.status === "in_progress") { window.setTimeout(poll, 1000); return; }
          show("message-response", m.response);
          show("message-error", m.error);
          var refresh = part("message-refresh");
          if (refresh) { refresh.hidden = true; }
          if (!m.commit_sha) { return; }
          var sha = m.commit_sha.slice(0, 7);
          part("message-sha").textContent = sha;
          part("message-diff").href = m.diff_url;
          part("message-commit").hidden = false;
          if (!frame) { return; }
          if (m.live) {
            if (!settled || waits > 0) { reloadPreview(); }
            previewSays("The preview shows the builder's change (commit " + sha + " is live).");
            return;
          }
          waits += 1;
          if (waits > 150) {
            previewSays("Commit " + sha + " is not live yet. Press Reload once the site is rebuilt.");
            return;
          }
          previewSays("Waiting for the site to be rebuilt with commit " + sha + "...");
          window.setTimeout(poll, 2000);
        })
        .catch(function () { window.setTimeout(poll, 3000); });
    };
    window.setTimeout(poll, settled ? 0 : 700);
  };
  Array.prototype.forEach.call(document.querySelectorAll(".message[data-status=in_progress]"), function (box) {
    follow(box, false);
  });
  var latest = document.querySelector("#latest .message[data-status=complete]");
  if (previewFrame() && latest && latest.querySelector(".message-sha").textContent) { follow(latest, true); }

  var send = document.getElementById("builder-form");
  if (send) {
    send.addEventListener("submit", function () {
      // One message per press: a second press while the first is sent would start a second edit.
      window.setTimeout(function () { document.getElementById("builder-send").disabled = true; }, 0);
    });
  }

  // ---- knowledge: bytes as the server counts them (UTF-8), shown as you type
  var text = document.getElementById("knowledge-text");
  if (text) {
    var count = document.getElementById("knowledge-count");
    var max = parseInt(text.dataset.maxBytes, 10);
    var format = function (n) { return n.toLocaleString("en-US"); };
    var update = function () {
      var bytes = new TextEncoder().encode(text.value).length;
      var over = bytes > max;
      count.textContent = format(bytes) + " of " + format(max) + " bytes" +
        (over ? ": " + format(bytes - max) + " over the limit" : "");
      count.classList.toggle("over", over);
      text.setAttribute("aria-invalid", over ? "true" : "false");
    };
    text.addEventListener("input", update);
    update();
  }
})();
