// Live refresh: the page works without this script; with it, the view is fetched again every
// data-refresh seconds and its <main> swapped in place, unless the tab is hidden, the box is
// unticked, or the admin is busy with a form (focus in it, or a value typed).
(function () {
  "use strict";
  var secs = parseInt(document.body.getAttribute("data-refresh") || "0", 10);
  var live = document.getElementById("live");
  if (!secs || !live) return;
  var dirty = false;
  document.addEventListener("input", function () { dirty = true; });
  function busy() {
    var a = document.activeElement;
    return dirty || (a && a.closest && a.closest("form") !== null);
  }
  function tick() {
    if (!live.checked || document.hidden || busy()) return;
    fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } }).then(function (res) {
      if (res.redirected || !res.ok) { location.reload(); return null; }
      return res.text();
    }).then(function (html) {
      if (html === null || busy()) return;
      var doc = new DOMParser().parseFromString(html, "text/html");
      var fresh = doc.getElementById("main"), main = document.getElementById("main");
      if (!fresh || !main) return;
      main.innerHTML = fresh.innerHTML;
      var up = document.getElementById("updated");
      if (up) up.textContent = "· updated " + new Date().toLocaleTimeString();
    }).catch(function () { /* the server is away: try again on the next tick */ });
  }
  setInterval(tick, secs * 1000);
})();
