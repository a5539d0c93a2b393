// SliceHub: the idle warning inside JupyterLab. The portal's proxy adds this script to
// JupyterLab's page; it asks the portal (same origin, the notebook host) every 10 s
// whether the session has an idle warning and shows it over JupyterLab's corner, with
// "Keep it running"; once the session has ended, a bar across the top says why and leads
// back to SliceHub. While it runs, a small chip at the bottom left says how long it has
// left ("SliceHub · 42 min left", counted down each minute) and leads back to SliceHub.
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
  var chip = null;
  var endsAt = null;
  var chipTimer = null;
  // As the portal's pages say it: "42 min left", "2 h 5 min left".
  function left(ms) {
    var minutes = Math.max(0, Math.floor((ms - Date.now()) / 60000));
    if (minutes === 0) { return "less than a minute left"; }
    if (minutes >= 120) { return Math.floor(minutes / 60) + " h " + (minutes % 60) + " min left"; }
    return minutes + " min left";
  }
  function drawChip() {
    if (chip && endsAt) { chip.textContent = "SliceHub · " + left(endsAt); }
  }
  function dropChip() {
    if (chip) { chip.remove(); chip = null; }
    if (chipTimer) { clearInterval(chipTimer); chipTimer = null; }
    endsAt = null;
  }
  function showChip(ms, url) {
    if (!chip) {
      chip = document.createElement("a");
      chip.id = "slicehub-chip";
      chip.target = "_top";
      chip.title = "Your sessions in SliceHub";
      // Small and out of the way: above JupyterLab's status bar, at its left end.
      chip.style.cssText = "position:fixed;left:8px;bottom:30px;z-index:99999;padding:2px 8px;" +
        "border-radius:10px;background:#ffffff;color:#1d4a2f;border:1px solid #b9cbbf;" +
        "font:12px/1.5 system-ui,sans-serif;text-decoration:none;box-shadow:0 1px 3px rgba(0,0,0,.15);opacity:.92";
      document.body.appendChild(chip);
      chipTimer = setInterval(drawChip, 60000);
    }
    chip.href = url;
    endsAt = ms;
    drawChip();
  }
  var timer = null;
  function ended(end) {
    hide();
    dropChip();
    bar = document.createElement("div");
    bar.id = "slicehub-session-ended";
    bar.setAttribute("role", "alert");
    // Over everything, JupyterLab's own "check your network" dialogs included.
    bar.style.cssText = "position:fixed;left:0;right:0;top:0;z-index:100001;padding:12px 16px;" +
      "background:#fde8e8;color:#7a1212;border-bottom:1px solid #f0a8a8;font:15px/1.4 system-ui,sans-serif;" +
      "display:flex;gap:12px;align-items:center;flex-wrap:wrap";
    var words = document.createElement("span");
    words.textContent = "SliceHub: this session has ended: " + end.reason +
      ". Your files are kept in your home folder.";
    var again = document.createElement("a");
    again.href = end.sessions_url;
    again.textContent = "Start again in SliceHub";
    again.style.cssText = "font-weight:600;color:inherit";
    bar.appendChild(words);
    bar.appendChild(again);
    document.body.appendChild(bar);
    if (timer) { clearInterval(timer); timer = null; }
  }
  function check() {
    fetch(base + "_slicehub/idle", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (answer) {
        // Not answered: no warning, and the chip goes on counting down.
        if (!answer) { hide(); return; }
        if (answer.ended) { ended(answer.ended); return; }
        if (answer.ends_at_ms && answer.sessions_url) { showChip(answer.ends_at_ms, answer.sessions_url); }
        else { dropChip(); }
        if (answer.idle && answer.idle.stops) { show(answer.idle); }
        else { hide(); }
      })
      .catch(function () {});
  }
  check();
  // Every 10 s: an ended session should say so before JupyterLab's own dialogs puzzle anyone.
  timer = setInterval(check, 10000);
})();
