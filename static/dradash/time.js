// Keeps every <time data-time="relative"> current ("3 min ago"), in the same words as the server
// ({% when %} in dradash/templatetags/dradash_format.py); the absolute UTC time stays in the title.
(function () {
  "use strict";
  function relative(then, now) {
    let seconds = Math.round((now - then) / 1000);
    const future = seconds < 0;
    seconds = Math.abs(seconds);
    if (seconds < 5) return "just now";
    const units = [["d", 86400], ["h", 3600], ["min", 60], ["s", 1]];
    for (const [unit, size] of units) {
      if (seconds >= size) {
        const amount = Math.floor(seconds / size) + " " + unit;
        return future ? "in " + amount : amount + " ago";
      }
    }
    return "just now";
  }
  function refresh(root) {
    const now = Date.now();
    (root || document).querySelectorAll('time[data-time="relative"][datetime]').forEach(function (el) {
      const then = Date.parse(el.getAttribute("datetime"));
      if (!isNaN(then)) el.textContent = relative(then, now);
    });
  }
  window.dradashTime = { relative: relative, refresh: refresh };
  document.addEventListener("DOMContentLoaded", function () { refresh(); });
  document.addEventListener("htmx:afterSettle", function (e) { refresh(e.target); });
  document.addEventListener("htmx:load", function (e) { refresh(e.target); });
  setInterval(refresh, 15000);
})();
