// The collapsible nav at narrow widths: #nav-toggle opens and closes it (aria-expanded follows).
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    const bar = document.getElementById("topbar");
    const button = document.getElementById("nav-toggle");
    if (!bar || !button) return;
    function set(open) {
      bar.dataset.nav = open ? "open" : "closed";
      button.setAttribute("aria-expanded", open ? "true" : "false");
      button.textContent = open ? "Close" : "Menu";
    }
    button.addEventListener("click", function () { set(bar.dataset.nav !== "open"); });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && bar.dataset.nav === "open") { set(false); button.focus(); }
    });
  });
})();
