(function () {
  "use strict";
  var base = document.title;
  var page = document.getElementById("page");
  var packed = document.getElementById("attempt-pages");
  var pages = null; // attempt id -> its page's HTML, unpacked on first use

  // The attempt pages come once, as gzip-compressed JSON in base64 (vreact/report/html/__init__.py);
  // the browser's DecompressionStream unpacks them.
  function unpack() {
    if (!pages) {
      var text = atob(packed ? packed.textContent : "");
      var bytes = new Uint8Array(text.length);
      for (var i = 0; i < text.length; i++) { bytes[i] = text.charCodeAt(i); }
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      pages = new Response(stream).text().then(JSON.parse);
    }
    return pages;
  }

  function show(view, title) {
    document.body.setAttribute("data-view", view);
    document.title = title;
  }

  // Which page shows: the summary, or one attempt (#attempt-ID), whose page is put in #page
  // (one at a time) and started at the top; body[data-view] and the title follow.
  var asked = 0;
  function route() {
    var id = decodeURIComponent(location.hash.slice(1));
    var m = /^attempt-(\d+)$/.exec(id);
    var mine = ++asked;
    if (!m || !page || typeof DecompressionStream === "undefined") {
      if (m && page) {
        page.textContent = "This browser cannot unpack the attempt pages (it has no DecompressionStream).";
        show(id, base);
        return;
      }
      show("summary", base);
      var el = id ? document.getElementById(id) : null;
      if (el) { el.scrollIntoView(); }
      return;
    }
    unpack().then(function (all) {
      if (mine !== asked) { return; } // a later navigation won
      var html = all[m[1]];
      if (html === undefined) { show("summary", base); return; }
      page.innerHTML = html;
      show(id, "Attempt " + m[1] + " · " + base);
      window.scrollTo(0, 0);
    });
  }
  window.addEventListener("hashchange", route);
  route();

  // Filters of the attempt list.
  var config = document.getElementById("f-config");
  var outcome = document.getElementById("f-outcome");
  var text = document.getElementById("f-text");
  var count = document.getElementById("f-count");
  var rows = document.querySelectorAll("tr.arow");
  function filter() {
    var c = config.value, o = outcome.value, t = text.value.trim().toLowerCase(), shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var ok = (!c || r.getAttribute("data-config") === c) && (!o || r.getAttribute("data-outcome") === o) &&
        (!t || r.textContent.toLowerCase().indexOf(t) >= 0);
      r.hidden = !ok;
      if (ok) { shown++; }
    }
    count.textContent = shown + " of " + rows.length + " attempts";
  }
  if (config && outcome && text && count) {
    config.addEventListener("change", filter);
    outcome.addEventListener("change", filter);
    text.addEventListener("input", filter);
  }
})();
