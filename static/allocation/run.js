// A running what-if: live progress over the run's websocket; the htmx poll in #run-status is the fallback.
(function () {
  "use strict";
  const script = document.currentScript;
  const path = script && script.dataset.runWs;
  if (!path || !("WebSocket" in window)) return;
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  let ws;
  try { ws = new WebSocket(proto + "//" + location.host + path); } catch (e) { return; }
  ws.onmessage = function (msg) {
    const run = JSON.parse(msg.data).run;
    if (!run) return;
    if (run.finished) { location.reload(); return; }
    const set = function (id, text) { const el = document.getElementById(id); if (el) el.textContent = text; };
    set("run-state", run.state.charAt(0).toUpperCase() + run.state.slice(1));
    set("run-phase", run.phase);
    set("run-percent", run.percent);
    const bar = document.getElementById("run-progress"); if (bar) bar.value = run.percent;
  };
})();
