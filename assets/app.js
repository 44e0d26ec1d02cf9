// Ledgerbase admin: the few behaviours that need script. Every page works
// without it; htmx (loaded separately) only makes searches live.
(function () {
  "use strict";
  // Copy buttons: <button data-copy="#element-id">.
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("[data-copy]");
    if (!btn) return;
    var el = document.querySelector(btn.getAttribute("data-copy"));
    if (!el) return;
    var text = (el.value !== undefined ? el.value : el.textContent).trim();
    var done = function () {
      var old = btn.textContent;
      btn.textContent = "Copied";
      btn.setAttribute("aria-live", "polite");
      setTimeout(function () { btn.textContent = old; }, 2000);
    };
    // Without clipboard access, select the text so Ctrl+C copies it.
    var fallback = function () {
      select(el);
      try { if (document.execCommand("copy")) done(); } catch (e) { /* left selected */ }
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, fallback);
    } else {
      fallback();
    }
  });
  function select(el) {
    if (el.select) { el.focus(); el.select(); return; }
    var r = document.createRange();
    r.selectNodeContents(el);
    var s = window.getSelection();
    s.removeAllRanges();
    s.addRange(r);
  }
  // The phone's menu (a <details>) closes on Escape, giving focus back to
  // its button, and when a person taps or tabs outside it.
  document.addEventListener("keydown", function (ev) {
    if (ev.key !== "Escape") return;
    var open = document.querySelector("details.menu[open]");
    if (!open) return;
    open.open = false;
    open.querySelector("summary").focus();
  });
  function closeOutside(ev) {
    var open = document.querySelector("details.menu[open]");
    if (open && !open.contains(ev.target)) open.open = false;
  }
  document.addEventListener("click", closeOutside);
  document.addEventListener("focusin", closeOutside);
  // htmx requests carry the session's CSRF token from <meta name="csrf-token">.
  document.addEventListener("htmx:configRequest", function (ev) {
    var m = document.querySelector('meta[name="csrf-token"]');
    if (m) ev.detail.headers["X-CSRF-Token"] = m.getAttribute("content");
  });
})();
