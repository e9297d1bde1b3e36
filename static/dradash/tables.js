// Server-rendered tables, made sortable, with sticky headers and a column chooser: <table data-table="KEY">.
// - Every header with text becomes a <button> (keyboard reachable) and carries aria-sort.
// - Client-side sort by default (cells' data-sort, a <time datetime>, a number, or the text, in that order);
//   with data-sort-param="sort" on the table the server sorts every page instead: the button changes
//   ?sort=KEY / ?sort=-KEY (headers name their key in data-sort-key; data-sort-current is the current one).
// - "Columns": checkboxes that hide columns, remembered per table in localStorage ("dradash.columns.KEY");
//   headers with data-default-hidden start hidden.
// - The table scrolls inside its own box so its header can stick (position: sticky in CSS); plain tables
//   (table.t without data-table) get a scroll box too (.table-wrap), so none is clipped at a phone's width.
// Live refreshes replace tables: htmx:afterSettle enhances the new ones and re-applies the sort and columns.
(function () {
  "use strict";
  const sorts = {};  // table key -> {index, dir}, kept across live refreshes of the same table

  function store(key, value) {
    try {
      if (value === undefined) return JSON.parse(localStorage.getItem("dradash.columns." + key) || "null");
      localStorage.setItem("dradash.columns." + key, JSON.stringify(value));
    } catch (e) { return null; }
    return null;
  }

  function label(th) { return (th.dataset.label || th.textContent || "").trim(); }

  function rows(table) {
    const body = table.tBodies[0];
    if (!body) return [];
    const width = table.tHead ? table.tHead.rows[0].cells.length : 0;
    return Array.from(body.rows).filter(function (r) { return r.cells.length === width; });
  }

  function value(cell) {
    if (!cell) return "";
    if (cell.dataset.sort !== undefined) {
      const n = Number(cell.dataset.sort);
      return isNaN(n) ? cell.dataset.sort : n;
    }
    const time = cell.querySelector("time[datetime]");
    if (time) return Date.parse(time.getAttribute("datetime"));
    const text = cell.textContent.trim();
    const number = text.replace(/[,\s%+]/g, "");
    if (number !== "" && !isNaN(Number(number))) return Number(number);
    return text.toLowerCase();
  }

  function compare(a, b) {
    if (typeof a === "number" && typeof b === "number") return a - b;
    if (typeof a === "number") return -1;
    if (typeof b === "number") return 1;
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }

  function sortClient(table, index, dir) {
    const body = table.tBodies[0];
    const list = rows(table);
    if (!body || list.length < 2) return;
    const keyed = list.map(function (r, i) { return [value(r.cells[index]), i, r]; });
    keyed.sort(function (x, y) {
      const c = compare(x[0], y[0]);
      return c ? (dir === "descending" ? -c : c) : x[1] - y[1];
    });
    const rest = Array.from(body.rows).filter(function (r) { return list.indexOf(r) < 0; });
    keyed.forEach(function (k) { body.appendChild(k[2]); });
    rest.forEach(function (r) { body.appendChild(r); });  // empty-state and detail rows stay last
  }

  function mark(headers, index, dir) {
    headers.forEach(function (th, i) {
      if (th.querySelector(".th-sort")) th.setAttribute("aria-sort", i === index ? dir : "none");
    });
  }

  function enhanceSorting(table, key, headers) {
    const param = table.dataset.sortParam;
    const current = table.dataset.sortCurrent || "";
    headers.forEach(function (th, index) {
      const text = label(th);
      if (!text || th.dataset.sortable === "false" || th.querySelector(".th-sort")) return;
      if (param && !th.dataset.sortKey) return;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "th-sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      th.setAttribute("aria-sort", "none");
      if (param && (current === th.dataset.sortKey || current === "-" + th.dataset.sortKey)) {
        th.setAttribute("aria-sort", current.charAt(0) === "-" ? "descending" : "ascending");
      }
      button.addEventListener("click", function () {
        const dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
        if (param) {
          const url = new URL(location.href);
          url.searchParams.set(param, (dir === "descending" ? "-" : "") + th.dataset.sortKey);
          url.searchParams.delete("page");
          location.assign(url.toString());
          return;
        }
        sorts[key] = { index: index, dir: dir };
        sortClient(table, index, dir);
        mark(headers, index, dir);
      });
    });
    const kept = sorts[key];
    if (!param && kept) { sortClient(table, kept.index, kept.dir); mark(headers, kept.index, kept.dir); }
  }

  function applyColumns(table, headers, hidden) {
    headers.forEach(function (th, index) {
      const off = hidden.indexOf(label(th)) >= 0;
      th.classList.toggle("col-hidden", off);
      rows(table).forEach(function (r) { if (r.cells[index]) r.cells[index].classList.toggle("col-hidden", off); });
    });
  }

  function enhanceColumns(table, key, headers, box) {
    const named = headers.filter(function (th) { return label(th); });
    if (named.length < 4 || table.dataset.columns === "false") return;
    let hidden = store(key);
    if (!Array.isArray(hidden)) hidden = named.filter(function (th) { return th.dataset.defaultHidden !== undefined; }).map(label);
    applyColumns(table, headers, hidden);
    const details = document.createElement("details");
    details.className = "col-chooser";
    const summary = document.createElement("summary");
    summary.textContent = "Columns";
    summary.setAttribute("aria-label", "Choose columns");
    details.appendChild(summary);
    const list = document.createElement("div");
    list.className = "col-list";
    named.forEach(function (th, i) {
      const name = label(th);
      const row = document.createElement("label");
      const box2 = document.createElement("input");
      box2.type = "checkbox";
      box2.checked = hidden.indexOf(name) < 0;
      box2.disabled = i === 0;  // the first column names the row: always shown
      box2.addEventListener("change", function () {
        hidden = hidden.filter(function (n) { return n !== name; });
        if (!box2.checked) hidden.push(name);
        store(key, hidden);
        applyColumns(table, headers, hidden);
      });
      row.append(box2, document.createTextNode(" " + name));
      list.appendChild(row);
    });
    details.appendChild(list);
    box.parentNode.insertBefore(details, box);
  }

  function enhance(table) {
    if (table.dataset.enhanced) return;
    table.dataset.enhanced = "true";
    const key = table.dataset.table || "table";
    if (!table.tHead || !table.tHead.rows.length) return;
    const headers = Array.from(table.tHead.rows[0].cells);
    let box = table.parentElement;
    if (!box.classList.contains("table-scroll")) {
      box = document.createElement("div");
      box.className = "table-scroll";
      table.parentNode.insertBefore(box, table);
      box.appendChild(table);
    }
    enhanceSorting(table, key, headers);
    enhanceColumns(table, key, headers, box);
  }

  // A plain table (no data-table) scrolls sideways in a box of its own too, with the edge shadows that say
  // so (.table-wrap in dradash.css), instead of squeezing its columns or clipping them at the panel's edge.
  function wrap(table) {
    const parent = table.parentElement;
    if (!parent || parent.classList.contains("table-scroll") || parent.classList.contains("table-wrap")) return;
    if (table.dataset.table || table.closest(".tabulator")) return;
    const box = document.createElement("div");
    box.className = "table-wrap";
    parent.insertBefore(box, table);
    box.appendChild(table);
  }

  // <table class="t stack">: at phone width each row reads as a card of "label: value" lines (dradash.css);
  // the labels are the headers' text, put on the cells here (data-label) unless the template named them.
  function labelCells(table) {
    if (!table.classList.contains("stack") || !table.tHead || !table.tHead.rows.length) return;
    const names = Array.from(table.tHead.rows[0].cells).map(label);
    Array.from(table.tBodies).forEach(function (body) {
      Array.from(body.rows).forEach(function (r) {
        if (r.cells.length !== names.length) return;  // empty-state and detail rows span columns
        Array.from(r.cells).forEach(function (c, i) { if (!c.dataset.label && names[i]) c.dataset.label = names[i]; });
      });
    });
    table.dataset.labelled = "true";
  }

  function enhanceAll(root) {
    const scope = root && root.querySelectorAll ? root : document;
    scope.querySelectorAll("table[data-table]").forEach(enhance);
    if (root && root.matches && root.matches("table[data-table]")) enhance(root);
    scope.querySelectorAll("table.t").forEach(function (t) { wrap(t); labelCells(t); });
    if (root && root.matches && root.matches("table.t")) { wrap(root); labelCells(root); }
  }

  window.dradashTables = { enhanceAll: enhanceAll };
  document.addEventListener("DOMContentLoaded", function () { enhanceAll(document); });
  document.addEventListener("htmx:afterSettle", function (e) { enhanceAll(e.target); });
  document.addEventListener("htmx:load", function (e) { enhanceAll(e.target); });  // new content of a swap
})();
