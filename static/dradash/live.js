// dradash live updates: one websocket per page, polling fallback when the socket cannot connect.
//
// The page's <body> carries data-live-ws (socket path), data-live-poll (JSON {version} endpoint) and
// data-live-version (the version the page was rendered at). Live regions are elements with
// data-live-kinds="resourceslices devicetaintrules ..." (or "*"); on a change of one of those kinds the
// region receives a "live-refresh" DOM event. htmx regions use hx-trigger="live-refresh" to re-fetch their
// ?fragment=; the Tabulator island listens for the same event and re-loads its current page.
(function () {
  "use strict";
  const body = document.body;
  const wsPath = body.dataset.liveWs;
  if (!wsPath) return;
  const pollUrl = body.dataset.livePoll;
  const POLL_MS = 4000;
  const MAX_BACKOFF_MS = 30000;
  let version = body.dataset.liveVersion || "";
  let socket = null;
  let pollTimer = null;
  let backoff = 1000;
  let stopped = false;
  // When the page last knew it showed the current state: rendered, a socket message, a poll answered.
  let currentAt = new Date();

  // The badge says how this page follows dradash (live, polling, not live) and, while the stale-data banner is
  // up (the cluster unreachable, a watch failing), that what dradash has is not current: a green "live" next
  // to "The data shown may not be current" read as if the cluster's data were live.
  let shownState = "";
  let shownText = "";
  function show() {
    const el = document.getElementById("live-status");
    if (!el || !shownState) return;
    const connected = shownState === "live" || shownState === "polling";
    const behind = connected && !!document.querySelector('#status-banner [data-testid="status-banner"]');
    el.dataset.state = shownState;
    el.dataset.current = behind ? "false" : "true";
    el.textContent = behind ? shownText + " · data not current" : shownText;
    el.title = behind ? "connected to dradash, but its data of the cluster is not current (see the banner)" : "live updates";
  }
  function setState(state, text) {
    shownState = state;
    shownText = text;
    show();
  }
  body.addEventListener("htmx:afterSettle", show);

  // A poll that failed (the server answered 5xx, or did not answer): what the page shows may be stale,
  // so it must not read "polling" as if it were current, until a poll is answered again.
  function notCurrent() {
    setState("offline", "not live — last updated " + currentAt.toISOString().slice(11, 19) + " UTC");
  }

  // A region already re-fetching gets one more refresh when that request ends, never a dropped one
  // (htmx would queue it on the element its own outerHTML swap then removes).
  const inflight = new Set();
  const pending = new Set();

  function fire(el, kinds) {
    if (el.id && inflight.has(el.id)) {
      pending.add(el.id);
      return;
    }
    el.dispatchEvent(new CustomEvent("live-refresh", { detail: { kinds: kinds } }));
  }

  body.addEventListener("htmx:beforeRequest", function (ev) {
    const el = ev.detail && ev.detail.elt;
    if (el && el.id && el.dataset && el.dataset.liveKinds) inflight.add(el.id);
  });
  function requester(ev) {
    const cfg = ev.detail && ev.detail.requestConfig;
    return (cfg && cfg.elt && cfg.elt.id) || "";
  }
  body.addEventListener("htmx:afterRequest", function (ev) {
    const id = requester(ev);
    if (!id || !inflight.delete(id)) return;
    // Nothing was swapped in: refresh the same element again at once if a change came meanwhile.
    if (!ev.detail.successful && pending.delete(id)) {
      window.setTimeout(function () { const el = document.getElementById(id); if (el) fire(el, null); }, 0);
    }
  });
  body.addEventListener("htmx:afterSettle", function (ev) {
    // The swapped-in element is wired up by htmx only once it settles: re-fire on it now.
    const id = requester(ev);
    if (id && pending.delete(id)) {
      const el = document.getElementById(id);
      if (el) fire(el, null);
    }
  });

  function refresh(kinds) {
    const wanted = kinds ? new Set(kinds) : null;
    document.querySelectorAll("[data-live-kinds]").forEach(function (el) {
      const mine = (el.dataset.liveKinds || "*").split(/\s+/).filter(Boolean);
      const hit = wanted === null || mine.includes("*") || mine.some(function (k) { return wanted.has(k); });
      if (hit) fire(el, kinds);
    });
    body.dataset.liveVersion = version;
    body.dispatchEvent(new CustomEvent("live-updated", { detail: { kinds: kinds, version: version } }));
  }

  function seeVersion(v, kinds) {
    if (v === undefined || v === null) return;
    if (v !== version || kinds) {
      version = v;
      refresh(kinds || null);
    }
  }

  function poll() {
    fetch(pollUrl, { headers: { Accept: "application/json" }, credentials: "same-origin", redirect: "manual" })
      .then(function (r) {
        if (r.type === "opaqueredirect" || r.status === 401 || r.status === 403) {
          stopped = true;
          stopPolling();
          setState("offline", "logged out");
          return null;
        }
        if (!r.ok) throw new Error("the server answered " + r.status);
        return r.json();
      })
      .then(function (data) {
        if (!data || pollTimer === null) return; // logged out, or the socket is back: it says what is
        currentAt = new Date();
        setState("polling", "polling");
        seeVersion(data.version, null);
      })
      .catch(function () { if (pollTimer !== null) notCurrent(); });
  }

  function startPolling() {
    if (pollTimer !== null || stopped || !pollUrl) return;
    setState("polling", "polling");
    poll();
    pollTimer = window.setInterval(poll, POLL_MS);
  }

  function stopPolling() {
    if (pollTimer !== null) window.clearInterval(pollTimer);
    pollTimer = null;
  }

  function connect() {
    if (stopped) return;
    if (!("WebSocket" in window)) { startPolling(); return; }
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + wsPath;
    try {
      socket = new WebSocket(url);
    } catch (e) {
      startPolling();
      return;
    }
    let opened = false;
    socket.onopen = function () {
      backoff = 1000;
      opened = true;
      currentAt = new Date();
      stopPolling();
      setState("live", "live");
    };
    socket.onmessage = function (ev) {
      let msg;
      try { msg = JSON.parse(ev.data); } catch (e) { return; }
      currentAt = new Date();
      if (msg.type === "hello") seeVersion(msg.version, null);
      else if (msg.type === "changed") {
        version = msg.version || version;
        refresh(msg.kinds || null);
      }
    };
    socket.onclose = function (ev) {
      if (opened) currentAt = new Date(); // the page was live up to now
      socket = null;
      if (ev.code === 4401 || ev.code === 4403) {
        stopped = true;
        stopPolling();
        setState("offline", "logged out");
        return;
      }
      if (ev.code === 1012 && opened) {
        // The server retires sockets past their lifetime (DRADASH_SOCKET_MAX_SECONDS): a new one at once,
        // no polling in between; the new socket's hello says whether anything changed meanwhile.
        connect();
        return;
      }
      startPolling();
      window.setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    };
  }

  // A live region whose re-fetch failed (server busy, brief outage) tries once more a little later,
  // so one lost response does not leave a stale fragment until the next change (the swapped-in
  // element starts without the flag, so a region that keeps failing stops after one retry).
  body.addEventListener("htmx:responseError", function (ev) {
    const el = ev.detail && ev.detail.elt;
    if (!el || !el.dataset || !el.dataset.liveKinds || el.dataset.liveRetried) return;
    el.dataset.liveRetried = "1";
    window.setTimeout(function () { fire(el, null); }, 1500);
  });

  window.dradashLive = {
    refresh: refresh,
    version: function () { return version; },
    // True when no live region is re-fetching or waiting to (regions of their own set data-live-busy).
    idle: function () {
      return inflight.size === 0 && pending.size === 0 && !document.querySelector("[data-live-busy]");
    },
    mode: function () { const el = document.getElementById("live-status"); return el ? el.dataset.state : ""; },
  };
  if (body.dataset.liveForcePolling === "true") startPolling();
  else connect();
})();
