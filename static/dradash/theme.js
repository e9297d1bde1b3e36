// The colour theme, applied before the first paint (loaded without defer in <head>): "light", "dark" or
// "auto" (follow prefers-color-scheme), chosen with the #theme-toggle button and kept in localStorage.
(function () {
  "use strict";
  const KEY = "dradash.theme";
  const CHOICES = ["auto", "light", "dark"];
  const media = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  function choice() {
    try { const c = localStorage.getItem(KEY); return CHOICES.indexOf(c) >= 0 ? c : "auto"; } catch (e) { return "auto"; }
  }
  function apply() {
    const c = choice();
    const dark = c === "dark" || (c === "auto" && media && media.matches);
    document.documentElement.dataset.theme = dark ? "dark" : "light";
    document.documentElement.dataset.themeChoice = c;
    const button = document.getElementById("theme-toggle");
    if (button) {
      button.textContent = "Theme: " + c;
      button.setAttribute("aria-label", "Colour theme: " + c + " (change)");
    }
    document.dispatchEvent(new CustomEvent("dradash:theme", { detail: { choice: c, dark: dark } }));
  }
  apply();
  if (media && media.addEventListener) media.addEventListener("change", apply);
  document.addEventListener("DOMContentLoaded", function () {
    apply();
    const button = document.getElementById("theme-toggle");
    if (!button) return;
    button.addEventListener("click", function () {
      const next = CHOICES[(CHOICES.indexOf(choice()) + 1) % CHOICES.length];
      try { localStorage.setItem(KEY, next); } catch (e) { /* private mode: this page only */ }
      apply();
    });
  });
})();
