// parcela payer pages: enhancements only. Every page works without this.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  // Copy buttons: data-copy names the field whose text is copied.
  document.addEventListener("click", function (e) {
    var b = e.target.closest("[data-copy]");
    if (!b) return;
    var field = document.getElementById(b.getAttribute("data-copy"));
    if (!field) return;
    var text = field.value || field.textContent;
    var done = function () {
      var label = b.textContent;
      b.textContent = "Copiado!";
      setTimeout(function () { b.textContent = label; }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { field.select(); document.execCommand("copy"); done(); });
    } else {
      field.select();
      document.execCommand("copy");
      done();
    }
  });

  // Cities follow the state in place.
  var state = document.getElementById("f-state");
  var city = document.getElementById("f-city");
  if (state && city) {
    var asked = 0;
    state.addEventListener("change", function () {
      var mine = ++asked;
      city.innerHTML = "";
      var first = document.createElement("option");
      first.value = "";
      first.textContent = state.value ? "Carregando cidades…" : "Escolha o estado primeiro";
      city.appendChild(first);
      city.disabled = true;
      if (!state.value) return;
      fetch(state.getAttribute("data-cities-url") + encodeURIComponent(state.value))
        .then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
        .then(function (list) {
          if (mine !== asked) return; // a later choice of state is on its way
          first.textContent = "Escolha a cidade";
          list.forEach(function (c) {
            var o = document.createElement("option");
            o.value = c.code;
            o.textContent = c.name;
            city.appendChild(o);
          });
          city.disabled = false;
        })
        .catch(function () {
          // Sent without a city (a disabled field is neither checked nor
          // sent), the form comes back with the state's cities, as it does
          // without JavaScript.
          if (mine !== asked) return;
          first.textContent = "Escolha após enviar";
        });
    });
  }

  // A financed plan is recomputed by the server when its options change;
  // the installment counts' labels follow the due day.
  document.querySelectorAll(".option-group").forEach(function (group) {
    var plan = group.querySelector(".plan");
    if (!plan) return;
    var asked = 0;
    group.querySelectorAll("[data-plan-input]").forEach(function (input) {
      input.addEventListener("change", function () {
        var mine = ++asked;
        var radios = group.querySelectorAll("input[name=option]");
        var chosen = group.querySelector("input[name=option]:checked");
        if (!chosen && radios.length) { radios[0].checked = true; chosen = radios[0]; }
        var q = new URLSearchParams();
        q.set("option", chosen ? chosen.value : "");
        q.set("installments", group.querySelector("select[name^='installments.']").value);
        q.set("due_day", group.querySelector("select[name^='due_day.']").value);
        plan.classList.add("loading");
        fetch(plan.getAttribute("data-plan-url") + "?" + q.toString(), { headers: { "Accept": "text/html" } })
          .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
          .then(function (html) {
            if (mine !== asked) return;
            var doc = new DOMParser().parseFromString("<div>" + html + "</div>", "text/html");
            var counts = doc.querySelector("select[data-counts]");
            if (counts) {
              counts.remove();
              var shown = group.querySelector("select[name^='installments.']");
              Array.prototype.forEach.call(counts.options, function (o) {
                var m = shown.querySelector("option[value='" + o.value + "']");
                if (m) m.textContent = o.textContent;
              });
            }
            plan.replaceChildren.apply(plan, Array.prototype.slice.call(doc.body.firstChild.childNodes));
          })
          .catch(function () {
            // The plan shown is the options' before: say so, rather than
            // leave it as if it were the chosen one's.
            if (mine !== asked) return;
            var note = document.createElement("p");
            note.className = "plan-stale";
            note.textContent = "Não foi possível atualizar o plano. Ele será calculado para as opções escolhidas ao enviar o formulário.";
            plan.replaceChildren(note);
          })
          .finally(function () { if (mine === asked) plan.classList.remove("loading"); });
      });
    });
  });

  // Countdowns to a Pix code's expiry, on the server's clock: the page
  // says what time it was when it was made. A code is payable until the
  // instant it expires: its last second reads 1 s, not "expirou". An
  // expired countdown is replaced by that note and counts no more (its
  // element is gone: each tick after it threw, and stopped the others).
  var clocks = Array.prototype.slice.call(document.querySelectorAll("[data-expires-at]"));
  if (clocks.length) {
    var tick = function () {
      clocks = clocks.filter(function (el) {
        var skew = Date.parse(el.getAttribute("data-now")) - loadedAt;
        var left = Math.ceil((Date.parse(el.getAttribute("data-expires-at")) - (Date.now() + skew)) / 1000);
        if (left <= 0) {
          // Its QR Code and code go too: a bank refuses an expired code.
          el.closest(".pix").classList.add("expired");
          el.closest(".time-left").textContent = "Este código expirou. Recarregue a página para ver as opções.";
          return false;
        }
        var h = Math.floor(left / 3600), m = Math.floor(left % 3600 / 60), s = left % 60;
        if (h >= 48) { // days away: seconds would only flicker
          el.textContent = Math.floor(h / 24) + " dias" + (h % 24 ? " e " + (h % 24) + " h" : "");
          return true;
        }
        el.textContent = (h ? h + " h " : "") + String(m).padStart(2, "0") + " min " + String(s).padStart(2, "0") + " s";
        return true;
      });
      if (!clocks.length) clearInterval(ticking);
    };
    var loadedAt = Date.now();
    var ticking = setInterval(tick, 1000);
    tick();
  }

  // A page waiting for a payment checks itself and reloads when what it
  // shows has changed. The server answers 304, without the page, while the
  // state is the one sent as the tag.
  var every = parseInt(document.body.getAttribute("data-refresh"), 10);
  if (every > 0) {
    var shown = document.body.getAttribute("data-state");
    setInterval(function () {
      fetch(location.href, { cache: "no-store", headers: { "Accept": "text/html", "If-None-Match": 'W/"' + shown + '"' } })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (!html) return;
          var m = html.match(/data-state="([^"]*)"/);
          if (m && m[1] !== shown) location.reload();
        })
        .catch(function () {});
    }, every * 1000);
  }
})();
