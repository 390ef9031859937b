(function () {
  "use strict";
  var base = document.title;
  // Which page shows: the summary, or one attempt (the CSS does it with :target; this keeps the
  // title and body[data-view] in step and starts an attempt page at the top).
  function route() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id ? document.getElementById(id) : null;
    var attempt = el && el.classList.contains("attempt");
    document.body.setAttribute("data-view", attempt ? id : "summary");
    document.title = attempt ? "Attempt " + el.getAttribute("data-attempt") + " · " + base : base;
    if (attempt) { window.scrollTo(0, 0); }
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
