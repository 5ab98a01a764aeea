// Renders this listener's own /openapi.yaml with the vendored Redoc: the
// production listener's document leaves out the sandbox-only operations.
// Fonts are the system's, so nothing is fetched from another host.
(function () {
  var sans = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
  Redoc.init('/openapi.yaml', {
    scrollYOffset: 'header.site',
    expandResponses: '200,201',
    jsonSampleExpandLevel: 3,
    theme: {
      typography: {
        fontFamily: sans,
        headings: { fontFamily: sans },
        code: { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace' }
      }
    }
  }, document.getElementById('redoc'));
})();
