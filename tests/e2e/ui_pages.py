"""The main pages and what the browser tests of the UI shell look for on them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: (path, short name) of every main page, as a user reaches them from the nav
MAIN_PAGES = [
    ("/", "overview"),
    ("/devices/", "devices"),
    ("/claims/", "claims"),
    ("/pods/", "pods"),
    ("/classes/", "classes"),
    ("/nodes/", "nodes"),
    ("/taint-rules/", "taint-rules"),
    ("/maintenance/", "maintenance"),
    ("/maintenance/new/", "maintenance-new"),
    ("/maintenance/audit/", "audit"),
    ("/whatif/", "whatif"),
    ("/migration/upgrade/", "migration-upgrade"),
    ("/migration/device-plugins/", "migration-device-plugins"),
    ("/migration/pool-status/", "migration-pool-status"),
    ("/search/?q=gpu", "search"),
    ("/accounts/tokens/", "tokens"),
]

#: collects Content-Security-Policy violations the page reports (before any page script runs)
WATCH_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " +
                              (e.sourceFile || "") + ":" + (e.lineNumber || 0));
});
"""

#: elements whose right edge is past the viewport (scrolling containers and their content excepted)
OVERFLOWING = """() => {
  const w = document.documentElement.clientWidth;
  const inScroller = (el) => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === "auto" || o === "scroll" || o === "hidden") return true;
    }
    return false;
  };
  return Array.from(document.querySelectorAll("body *"))
    .filter((el) => el.getClientRects().length && el.getBoundingClientRect().right > w + 1 && !inScroller(el))
    .slice(0, 8)
    .map((el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
         (el.className && typeof el.className === "string" ? "." + el.className.split(" ").join(".") : "") +
         " right=" + Math.round(el.getBoundingClientRect().right));
}"""


@contextmanager
def console_watch(page: Any) -> Iterator[list[str]]:
    """Console errors that name a refused resource ('Refused to …') and uncaught page errors."""
    problems: list[str] = []
    page.add_init_script(WATCH_VIOLATIONS)
    page.on("console", lambda m: problems.append(m.text) if "Refused to" in m.text else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    yield problems


def violations(page: Any) -> list[str]:
    return list(page.evaluate("window.__cspViolations || []"))
