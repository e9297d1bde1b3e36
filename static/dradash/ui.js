// Small page behaviours wired by data attributes (the policy allows no inline handlers):
// - <button data-copy="#selector">: copies that element's text to the clipboard.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    const button = event.target.closest && event.target.closest("[data-copy]");
    if (!button) return;
    const source = document.querySelector(button.dataset.copy);
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent).then(function () {
      const label = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = label; }, 1500);
    }, function () {});
  });
})();
