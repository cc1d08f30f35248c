// The builder panel's progress (polling the message as get_message does) and the knowledge byte counter.
// Both pages work without it: the panel has a Refresh link, the server counts and refuses over 10 KB.
(function () {
  "use strict";

  // ---- builder message: follow it until it is complete or has failed
  var box = document.getElementById("builder-message");
  if (box && box.dataset.status === "in_progress") {
    var show = function (id, text) {
      var el = document.getElementById(id);
      el.textContent = text || "";
      el.hidden = !text;
    };
    var poll = function () {
      fetch(box.dataset.poll, { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (response) {
          return response.json().then(function (data) { return { ok: response.ok, data: data }; });
        })
        .then(function (result) {
          var m = result.data || {};
          if (!result.ok) {
            show("message-error", m.message || "The builder's state could not be read. Use Refresh.");
            return;
          }
          var words = document.getElementById("message-words");
          words.textContent = m.words;
          words.className = "state state-" + m.status;
          box.dataset.status = m.status;
          if (m.status === "in_progress") { window.setTimeout(poll, 1000); return; }
          show("message-response", m.response);
          show("message-error", m.error);
          var refresh = document.getElementById("message-refresh");
          if (refresh) { refresh.hidden = true; }
          if (m.commit_sha) {
            document.getElementById("message-sha").textContent = m.commit_sha.slice(0, 7);
            document.getElementById("message-diff").href = m.diff_url;
            document.getElementById("message-commit").hidden = false;
          }
        })
        .catch(function () { window.setTimeout(poll, 3000); });
    };
    window.setTimeout(poll, 700);
  }

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
