// SliceHub: the idle warning inside JupyterLab. The portal's proxy adds this script to
// JupyterLab's page; it asks the portal (same origin, the notebook host) every 30 s
// whether the session has an idle warning and shows it over JupyterLab's corner, with
// "Keep it running".
(function () {
  var base = document.currentScript.src.replace(/_slicehub\/idle\.js.*$/, "");
  var bar = null;
  function clock(ms) {
    return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }
  function hide() {
    if (bar) { bar.remove(); bar = null; }
  }
  function show(idle) {
    if (!bar) {
      bar = document.createElement("div");
      bar.id = "slicehub-idle-warning";
      bar.setAttribute("role", "alert");
      // Above JupyterLab's status bar, clear of its menus, like its own notifications.
      bar.style.cssText = "position:fixed;right:12px;bottom:36px;max-width:min(420px,calc(100vw - 24px));" +
        "z-index:100000;padding:10px 12px;border-radius:6px;box-shadow:0 2px 8px rgba(0,0,0,.2);" +
        "background:#fff4d6;color:#7a4b00;border:1px solid #f0d48a;font:14px/1.4 system-ui,sans-serif;" +
        "display:flex;gap:10px;align-items:center;flex-wrap:wrap";
      document.body.appendChild(bar);
    }
    var minutes = Math.max(0, Math.floor((Date.now() - idle.idle_since_ms) / 60000));
    var text = "SliceHub: this notebook has been idle for " + minutes + " min and stops at " +
      clock(idle.stops_at_ms) + " unless you continue." +
      (idle.early ? " (Early: other students are waiting for a slice of this size.)" : "");
    bar.textContent = "";
    var words = document.createElement("span");
    words.textContent = text;
    var keep = document.createElement("button");
    keep.type = "button";
    keep.textContent = "Keep it running";
    keep.style.cssText = "font:inherit;padding:2px 10px;cursor:pointer";
    keep.onclick = function () {
      fetch(base + "_slicehub/keep", { method: "POST", headers: { "X-SliceHub": "keep" }, credentials: "same-origin" })
        .then(function (r) { if (r.ok) { hide(); } });
    };
    bar.appendChild(words);
    bar.appendChild(keep);
  }
  function check() {
    fetch(base + "_slicehub/idle", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : { idle: null }; })
      .then(function (answer) { if (answer.idle && answer.idle.stops) { show(answer.idle); } else { hide(); } })
      .catch(function () {});
  }
  check();
  setInterval(check, 30000);
})();
