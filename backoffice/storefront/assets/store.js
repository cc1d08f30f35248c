// The storefront's one script: the analytics beacon, the cart (kept in this browser), checkout through the
// shop's storefront API on this site's own origin (/api/storefront/*, proxied to the shop), and the order
// confirmation. Prices shown here are estimates; the server computes what is charged.
(function () {
  "use strict";
  var root = document.documentElement;
  var base = root.dataset.base || "";
  var api = base + "/api/storefront";
  var KEY = "svc-cart:" + base;

  function id() {
    var bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }
  function stored(storage, key) {
    try {
      var value = storage.getItem(key);
      if (!value) { value = id(); storage.setItem(key, value); }
      return value;
    } catch (e) { return id(); }
  }

  // ---- analytics: one beacon per page view
  function beacon() {
    var url = root.dataset.beacon, site = root.dataset.site;
    if (!url || !site) return;
    var path = location.pathname.slice(base.length) || "/";
    var body = JSON.stringify({
      site: site, visitor: stored(localStorage, "svc-visitor"), session: stored(sessionStorage, "svc-session"),
      path: path.charAt(0) === "/" ? path : "/" + path,
      referrer: document.referrer && document.referrer.indexOf(location.origin) !== 0 ? document.referrer : ""
    });
    fetch(url, { method: "POST", body: body, headers: { "Content-Type": "application/json" },
      keepalive: true, mode: "cors", credentials: "omit" }).catch(function () {});
  }

  // ---- the cart
  function cart() {
    try { var lines = JSON.parse(localStorage.getItem(KEY) || "[]"); return Array.isArray(lines) ? lines : []; }
    catch (e) { return []; }
  }
  function save(lines) {
    localStorage.setItem(KEY, JSON.stringify(lines));
    badge();
  }
  function money(cents, currency) {
    try { return new Intl.NumberFormat(root.lang || "en", { style: "currency", currency: currency || "EUR" }).format(cents / 100); }
    catch (e) { return (cents / 100).toFixed(2) + " " + (currency || ""); }
  }
  function badge() {
    var count = cart().reduce(function (n, l) { return n + l.quantity; }, 0);
    document.querySelectorAll("[data-cart-count]").forEach(function (el) {
      el.textContent = String(count);
      el.hidden = count === 0;
    });
  }
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function addToCart(form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var quantity = Math.max(1, Math.min(100, parseInt(form.querySelector("input[name=quantity]").value, 10) || 1));
      var lines = cart();
      var line = lines.filter(function (l) { return l.slug === form.dataset.slug; })[0];
      if (line) { line.quantity = Math.min(100, line.quantity + quantity); }
      else {
        lines.push({ slug: form.dataset.slug, title: form.dataset.title, price_cents: parseInt(form.dataset.price, 10) || 0,
          currency: form.dataset.currency, image: form.dataset.image, quantity: quantity });
      }
      save(lines);
      var status = form.querySelector("[data-status]");
      status.textContent = "";
      status.appendChild(document.createTextNode("Added to your cart. "));
      status.appendChild(el("a", { href: base + "/cart/" }, "View cart"));
    });
  }

  function renderLines(container, editable) {
    var lines = cart();
    container.textContent = "";
    lines.forEach(function (line, index) {
      var item = el("li", { "class": "cart-line" });
      item.appendChild(el("img", { src: line.image, alt: "", width: "64", height: "64" }));
      var info = el("div");
      info.appendChild(el("a", { href: base + "/products/" + encodeURIComponent(line.slug) + "/" }, line.title));
      if (editable) {
        var qty = el("div", { "class": "qty" });
        var label = el("label", { "for": "qty-" + index, "class": "sr" }, "Quantity of " + line.title);
        var input = el("input", { id: "qty-" + index, type: "number", min: "1", max: "100", value: String(line.quantity) });
        input.addEventListener("change", function () {
          var all = cart();
          all[index].quantity = Math.max(1, Math.min(100, parseInt(input.value, 10) || 1));
          save(all); refresh();
        });
        var remove = el("button", { type: "button", "class": "link-button" }, "Remove");
        remove.addEventListener("click", function () { var all = cart(); all.splice(index, 1); save(all); refresh(); });
        qty.appendChild(label); qty.appendChild(input); qty.appendChild(remove);
        info.appendChild(qty);
      } else {
        info.appendChild(el("div", { "class": "muted" }, "Quantity " + line.quantity));
      }
      item.appendChild(info);
      item.appendChild(el("div", {}, money(line.price_cents * line.quantity, line.currency)));
      container.appendChild(item);
    });
    var subtotal = lines.reduce(function (n, l) { return n + l.price_cents * l.quantity; }, 0);
    document.querySelectorAll("[data-cart-subtotal]").forEach(function (node) {
      node.textContent = money(subtotal, lines.length ? lines[0].currency : "EUR");
    });
    return lines.length;
  }

  function refresh() {
    var box = document.querySelector("[data-cart]");
    if (!box) return;
    var count = renderLines(box.querySelector("[data-cart-lines]"), true);
    box.querySelector("[data-cart-empty]").hidden = count > 0;
    box.querySelector("[data-cart-foot]").hidden = count === 0;
  }

  // ---- checkout
  function request(method, path, body) {
    return fetch(api + path, { method: method, headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: body ? JSON.stringify(body) : undefined, credentials: "same-origin" })
      .then(function (answer) {
        return answer.json().catch(function () { return {}; }).then(function (data) {
          if (!answer.ok) {
            var words = typeof data.error === "string" ? data.error : "Please check the form and try again.";
            throw new Error(words);
          }
          return data;
        });
      });
  }

  function checkout(form) {
    var status = form.querySelector("[data-status]");
    var methods = form.querySelector("[data-shipping-methods]");
    document.querySelectorAll(".summary [data-cart-lines]").forEach(function (n) { renderLines(n, false); });
    request("GET", "/store").then(function (store) {
      if (store.checkout_open) {
        form.hidden = false;
        document.querySelectorAll("[data-checkout-closed]").forEach(function (n) { n.hidden = true; });
      }
    }).catch(function () {});
    var country = form.querySelector("#country");
    country.addEventListener("change", function () {
      var code = country.value.trim().toUpperCase();
      if (!/^[A-Z]{2}$/.test(code)) return;
      request("GET", "/shipping-methods?country=" + code).then(function (data) {
        methods.textContent = "";
        if (!data.items.length) { methods.appendChild(el("p", {}, "We do not ship to " + code + " yet.")); return; }
        data.items.forEach(function (m, i) {
          var label = el("label", { "class": "method" });
          var radio = el("input", { type: "radio", name: "shipping_method_id", value: m.id });
          if (i === 0) radio.checked = true;
          label.appendChild(radio);
          var days = m.min_days ? " (" + m.min_days + "–" + m.max_days + " days)" : "";
          label.appendChild(document.createTextNode(m.name + days + ": " + money(m.price_cents, lines0Currency())));
          methods.appendChild(label);
        });
      }).catch(function (error) { methods.textContent = error.message; });
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var lines = cart();
      if (!lines.length) { status.textContent = "Your cart is empty."; return; }
      var value = function (name) { var f = form.elements[name]; return f ? f.value.trim() : ""; };
      var chosen = form.querySelector("input[name=shipping_method_id]:checked");
      if (!form.checkValidity() || !chosen) {
        status.textContent = chosen ? "Please fill in every required field." : "Choose a shipping method (enter your country first).";
        return;
      }
      var body = {
        email: value("email"),
        items: lines.map(function (l) { return { slug: l.slug, quantity: l.quantity }; }),
        shipping_method_id: chosen.value,
        shipping_address: { name: value("name"), line1: value("line1"), line2: value("line2"), city: value("city"),
          postal_code: value("postal_code"), country: value("country").toUpperCase() }
      };
      if (value("coupon")) body.coupon_code = value("coupon");
      status.textContent = "Reserving your items…";
      form.querySelector("button[type=submit]").disabled = true;
      request("POST", "/checkout", body).then(function (result) {
        sessionStorage.setItem("svc-order-token", result.token);
        location.href = result.payment_url;
      }).catch(function (error) {
        status.textContent = error.message;
        form.querySelector("button[type=submit]").disabled = false;
      });
    });
  }
  function lines0Currency() { var l = cart(); return l.length ? l[0].currency : "EUR"; }

  // ---- order confirmation
  function order(box) {
    var token = new URLSearchParams(location.search).get("token");
    var status = box.querySelector("[data-order-status]");
    var detail = box.querySelector("[data-order-detail]");
    if (!token) { status.textContent = "No order to show: the link is missing its order token."; return; }
    var tries = 0;
    (function poll() {
      request("GET", "/orders/" + encodeURIComponent(token)).then(function (o) {
        var words = { paid: "Your payment was received.", pending: "We are waiting for the payment to be confirmed…",
          cancelled: "This order was cancelled: it was not paid in time." };
        status.textContent = "Order #" + o.number + ": " + (words[o.status] || o.status);
        detail.textContent = "";
        var list = el("dl");
        o.items.forEach(function (i) {
          list.appendChild(el("dt", {}, i.title + " × " + i.quantity));
          list.appendChild(el("dd", {}, money(i.total_cents, o.currency)));
        });
        [["Subtotal", o.subtotal_cents], ["Discount", -o.discount_cents], ["Shipping", o.shipping_cents],
         ["Tax", o.tax_cents], ["Total", o.total_cents]].forEach(function (row) {
          if (row[0] === "Discount" && !o.discount_cents) return;
          list.appendChild(el("dt", {}, row[0])); list.appendChild(el("dd", {}, money(row[1], o.currency)));
        });
        detail.appendChild(list);
        if (o.status === "paid") { localStorage.removeItem(KEY); badge(); }
        if (o.status === "pending" && ++tries < 40) setTimeout(poll, 3000);
      }).catch(function (error) { status.textContent = error.message; });
    })();
  }

  document.addEventListener("DOMContentLoaded", function () {
    beacon();
    badge();
    document.querySelectorAll("form.add-to-cart").forEach(addToCart);
    refresh();
    var form = document.querySelector("[data-checkout-form]");
    if (form) checkout(form);
    var box = document.querySelector("[data-order]");
    if (box) order(box);
  });
})();
