// Renders the API's OpenAPI document on /docs with the vendored Redoc
// (assets/redoc), offline: system fonts, nothing fetched but from this server.
(function () {
  "use strict";
  var el = document.getElementById("redoc");
  var sans = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
  Redoc.init(el.getAttribute("data-spec"), {
    expandResponses: "200,201",
    theme: {
      typography: {
        fontFamily: sans,
        headings: { fontFamily: sans },
        code: { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace' }
      }
    }
  }, el); // on an error, Redoc shows it in the page
})();
