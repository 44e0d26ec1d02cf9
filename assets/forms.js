// Ledgerbase admin: the forms' behaviours (pickers, focus after a swap). Every form works without it.
(function () {
  "use strict";

  // htmx settles the attributes it swaps through setAttribute; a "style"
  // among them would break the page's Content-Security-Policy.
  if (window.htmx && htmx.config.attributesToSettle) {
    htmx.config.attributesToSettle = htmx.config.attributesToSettle.filter(function (a) { return a !== "style"; });
  }

  // A picker's text input names the element holding its matches
  // (data-pick-query="picks-…"); the matches are buttons.pick in it.
  function listOf(input) {
    var id = input.getAttribute("data-pick-query");
    return id ? document.getElementById(id) : null;
  }
  function matches(list) {
    return list ? Array.prototype.slice.call(list.querySelectorAll("button.pick")) : [];
  }
  function queryOf(button) {
    var list = button.closest(".picks");
    if (!list || !list.id) return null;
    return document.querySelector('[data-pick-query="' + list.id + '"]');
  }
  function close(list) {
    if (list) list.innerHTML = "";
  }

  // Enter handled on keydown must not also send the form on its keypress
  // (a browser that delivers the two apart, as automation does).
  var handledEnter = null;
  document.addEventListener("keypress", function (ev) {
    if (ev.key === "Enter" && handledEnter && ev.target === handledEnter) ev.preventDefault();
    handledEnter = null;
  });

  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    handledEnter = null;
    if (!t || !t.matches) return;
    if (t.matches("[data-pick-query]")) {
      var list = listOf(t), found = matches(list);
      if (ev.key === "ArrowDown" && found.length) {
        ev.preventDefault();
        found[0].focus();
      } else if (ev.key === "Enter" && !ev.isComposing) {
        if (found.length) {
          ev.preventDefault();
          handledEnter = t;
          found[0].click();
          return;
        }
        // A party picker without matches asks for them (Find); a line's
        // description lets Enter send the form, as any field does.
        var find = t.closest("[data-picker]") && t.closest("[data-picker]").querySelector("button[data-find]");
        if (find) {
          ev.preventDefault();
          handledEnter = t;
          find.click();
        }
      } else if (ev.key === "Escape" && found.length) {
        ev.preventDefault();
        close(list);
      }
      return;
    }
    if (t.matches(".picks button.pick")) {
      var all = matches(t.closest(".picks")), i = all.indexOf(t), input = queryOf(t);
      if (ev.key === "ArrowDown" && i + 1 < all.length) {
        ev.preventDefault();
        all[i + 1].focus();
      } else if (ev.key === "ArrowUp") {
        ev.preventDefault();
        if (i > 0) all[i - 1].focus();
        else if (input) input.focus();
      } else if (ev.key === "Escape" && input) {
        ev.preventDefault();
        input.focus();
        close(t.closest(".picks"));
      }
    }
  });

  // After a swap the focus stays where the person works: the server marks
  // that input autofocus (htmx focuses it); if the swap took the focused
  // element away without one, the form's first field takes it rather
  // than the page's body.
  var before = null;
  document.addEventListener("htmx:beforeSwap", function () { before = document.activeElement; });
  document.addEventListener("htmx:afterSettle", function (ev) {
    var lost = !document.activeElement || document.activeElement === document.body;
    if (!lost || !before || document.contains(before)) return;
    var target = ev.detail && ev.detail.target;
    var form = target && (target.closest ? target.closest("form") : null) || document.getElementById("record-form");
    var next = target && document.contains(target) && target.querySelector("input:not([type=hidden]), select, textarea, button");
    if (!next && form) next = form.querySelector("input:not([type=hidden]):not([tabindex='-1']), select, textarea");
    if (next) next.focus();
  });
})();
