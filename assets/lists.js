// Ledgerbase admin: the lists' behaviours (selecting rows for bulk actions). Every list works without it.
(() => {
  "use strict";
  // "Select all" of a list's page, and a count of what is selected.
  const update = (form) => {
    const boxes = [...form.querySelectorAll('input[type=checkbox][name="id"]')];
    const n = boxes.filter((b) => b.checked).length;
    const all = form.querySelector("input.pick-all");
    if (all) {
      all.checked = n > 0 && n === boxes.length;
      all.indeterminate = n > 0 && n < boxes.length;
    }
    const note = form.querySelector("#selected-note");
    if (note) {
      note.textContent = n === 0 ? "Select rows to act on several at once." : n + " selected.";
    }
  };
  const init = (root) => {
    for (const form of root.querySelectorAll("form.bulk")) {
      const all = form.querySelector("input.pick-all");
      if (all) {
        all.hidden = false;
      }
      update(form);
    }
  };
  document.addEventListener("change", (e) => {
    const form = e.target.closest && e.target.closest("form.bulk");
    if (!form) {
      return;
    }
    if (e.target.matches("input.pick-all")) {
      for (const b of form.querySelectorAll('input[type=checkbox][name="id"]')) {
        b.checked = e.target.checked;
      }
    }
    update(form);
  });
  document.addEventListener("DOMContentLoaded", () => init(document));
  // htmx swaps the results in place when the filters change.
  document.addEventListener("htmx:afterSettle", (e) => init(e.target));
})();
