// The Devices table: a Tabulator island with remote pagination over /devices/data/.
// Cells are built with textContent only: everything in them comes from the cluster.
(function () {
  "use strict";
  function el(tag, cls, text, title) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    if (title) e.title = title;
    return e;
  }
  // A name's text: a word (no whitespace, at most spec.wordMax characters, as dradash_format.WORD_MAX) is
  // kept whole in its cell ("worker-0006", never "worker-" / "0006"); fitColumns widens its column to fit.
  function nameText(text, spec) {
    const word = text && text.length <= spec.wordMax && !/\s/.test(text);
    return el("span", word ? "word" : null, text);
  }
  // A string from the cluster as the pages' |k8s filter shows it: isolated in a <bdi> (a right-to-left
  // override inside it reorders nothing outside) and cut to spec.stringMax characters.
  let stringMax = 1024;
  function k8s(text, cls) {
    const t = text === null || text === undefined ? "" : String(text);
    return el("bdi", cls, t.length > stringMax ? t.slice(0, stringMax - 1) + "…" : t);
  }
  const EFFECTS = ["None", "NoSchedule", "NoExecute"];
  function taints(cell) {
    const box = el("span");
    (cell.getValue() || []).forEach(function (t) {
      const effect = EFFECTS.includes(t.effect) ? t.effect : "None";
      const from = t.source === "rule" ? "DeviceTaintRule " + t.rule : "ResourceSlice (driver)";
      const label = t.key + (t.value ? "=" + t.value : "") + ":" + t.effect;
      const badge = el("span", "badge taint " + effect, null, k8s(from).textContent);
      badge.appendChild(k8s(label));
      box.appendChild(badge);
    });
    return box;
  }
  // A link that narrows the table to this value of a filter, keeping the other filters.
  function filterLink(param, value, child) {
    const query = new URLSearchParams(location.search);
    ["page", "sort", "dir"].forEach(function (k) { query.delete(k); });
    query.set(param, value);
    const a = el("a", "filter-link");
    a.href = location.pathname + "?" + query.toString();
    a.appendChild(child);
    return a;
  }
  function deviceLink(cell, column, spec) {
    const d = cell.getRow().getData();
    const a = el("a", null, null, d.driver + "/" + d.pool + "/" + d.device);
    a.appendChild(nameText(d.device, spec));
    a.href = d.url;
    return a;
  }
  function pool(cell, column, spec) {
    const d = cell.getRow().getData();
    const box = el("span");
    box.appendChild(column.filter ? filterLink(column.filter, d.pool, nameText(d.pool, spec)) : nameText(d.pool, spec));
    if (!d.poolComplete) box.appendChild(el("span", "badge warn", "incomplete", "not all ResourceSlices of this pool are present"));
    return box;
  }
  function badges(cell, column) {
    const box = el("span");
    (cell.getValue() || []).forEach(function (v) {
      const badge = el("span", "badge", v);
      box.appendChild(column.filter ? filterLink(column.filter, v, badge) : badge);
    });
    return box;
  }
  function state(cell) {
    const v = cell.getValue();
    const d = cell.getRow().getData();
    // "free" in the data (Device.allocation_state) reads "unallocated": on the pages "free" means allocatable now.
    const cls = v === "free" ? "badge" : "badge ok";
    return el("span", cls, (v === "free" ? "unallocated" : v) + (d.adminAccess ? " (admin)" : ""),
      v === "free" ? "no claim holds it; the Allocatable column says whether a claim could be given it now" : "");
  }
  // Whether a one-device claim of the device's class could be given it now, and if not, why.
  function allocatable(cell, column, spec) {
    const v = cell.getValue();
    const d = cell.getRow().getData();
    const labels = spec.blockLabels || {};
    if (v === "yes") return el("span", "badge ok", "yes", "a claim for one device of its class could be given it now");
    // An allocated device is simply in use; the reason matters for unallocated devices.
    const cls = d.state === "free" ? "badge warn" : "muted";
    const badge = el("span", cls, labels[v] || v, d.why || "");
    return column.filter ? filterLink(column.filter, v, badge) : badge;
  }
  // No health reported: the words the server gives (inventory.tables.health_label), as on a device's page.
  function health(cell, column, spec) {
    const v = cell.getValue();
    if (!v) return el("span", "muted", spec.healthUnreported);
    return el("span", v === "Healthy" ? "badge ok" : "badge bad", v);
  }
  // The slice's creationTimestamp as the other pages' Age columns show one: "3 d ago", the UTC time in
  // the title; time.js keeps it current.
  function age(cell) {
    const v = cell.getValue();
    const then = v ? Date.parse(v) : NaN;
    if (isNaN(then)) return el("span", "muted", v || "—");
    const t = el("time", "muted", window.dradashTime ? window.dradashTime.relative(then, Date.now()) : v,
      new Date(then).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC"));
    t.setAttribute("datetime", v);
    t.dataset.time = "relative";
    return t;
  }
  // "namespace/name" as a link's text that may break after the slash, and only there: the namespace and
  // the name are each kept whole (a narrow column otherwise broke a name mid-word: "default/lega cy-gpu-…").
  function reference(a, text, spec) {
    const slash = text.indexOf("/");
    if (slash < 0) { a.appendChild(nameText(text, spec)); return a; }
    a.appendChild(nameText(text.slice(0, slash + 1), spec));
    a.appendChild(document.createElement("wbr"));
    a.appendChild(nameText(text.slice(slash + 1), spec));
    return a;
  }
  function claims(cell, column, spec) {
    const box = el("span");
    (cell.getValue() || []).forEach(function (c) {
      const parts = c.split("/");
      const a = reference(el("a"), c, spec);
      a.href = "/claims/" + encodeURIComponent(parts[0]) + "/" + encodeURIComponent(parts.slice(1).join("/")) + "/";
      box.appendChild(a);
      box.appendChild(document.createTextNode(" "));
    });
    return box;
  }
  // "namespace/name" → a link to the Pod page (a namespace never holds "/", a pod name neither).
  function pods(cell, column, spec) {
    const box = el("span");
    (cell.getValue() || []).forEach(function (p) {
      const parts = p.split("/");
      const a = reference(el("a", "pod-link"), p, spec);
      a.href = "/pods/" + encodeURIComponent(parts[0]) + "/" + encodeURIComponent(parts.slice(1).join("/")) + "/";
      box.appendChild(a);
      box.appendChild(document.createTextNode(" "));
    });
    return box;
  }
  // name: value per line; a list-typed attribute's elements each a chip in brackets ("a,b" stays one).
  function attributes(cell) {
    const box = el("span", "attr-lines");
    const values = cell.getValue() || {};
    Object.keys(values).forEach(function (name) {
      const line = el("span", "attr-line");
      const key = el("span", "mono");
      key.append(k8s(name), ": ");
      line.appendChild(key);
      const v = values[name];
      if (Array.isArray(v)) {
        const list = el("span", "attr-list");
        list.dataset.list = "true";
        list.appendChild(document.createTextNode("["));
        v.forEach(function (item) { list.appendChild(k8s(item, "badge")); });
        list.appendChild(document.createTextNode("]"));
        line.appendChild(list);
      } else {
        line.appendChild(k8s(v, "mono"));
      }
      box.appendChild(line);
    });
    return box;
  }
  function joined(cell) {
    return document.createTextNode((cell.getValue() || []).join(", "));
  }
  function plain(cell, column, spec) {
    const v = cell.getValue();
    const text = v === null || v === undefined ? "" : String(v);
    return column.filter && text ? filterLink(column.filter, text, nameText(text, spec)) : document.createTextNode(text);
  }
  // Columns as wide as what they hold needs: a name or a badge is not cut off at a column's edge, and a name
  // (a word) is not broken. Tabulator's fitColumns sizes columns from their declared widths, not their
  // content, so after each render the columns are laid out here the same way (declared widths; the rest of
  // the room shared by widthGrow, none below its minimum) with each column at least as wide as its cells
  // need, to a cap; the widths go into the columns' definitions, which Tabulator's layout reads when it
  // shares the room (on a redraw, a resize). Where the declared widths fit but the names would not (a
  // 35-character claim name at 1440 px), names in cells that wrap (Claim, Pods) may break at their hyphens
  // rather than push the table past its box: they wrap only when they must. Narrower than the declared
  // widths (a phone) the table scrolls sideways anyway, and names stay whole. The cap: room for a name of
  // spec.wordMax characters (63: "trainer-7f9c-example-com-gpu-extended-resources-abcde" and longer) at the
  // table's 13 px, about 7 px a character, with some to spare; a longer one-line cell is cut off there.
  function fittedColumnMax(spec) { return Math.max(360, spec.wordMax * 8); }
  function cellNeed(element, wordsWhole) {
    const style = getComputedStyle(element);
    let widest = 0;
    if (style.whiteSpace === "nowrap") {  // Tabulator's cells: one line
      const range = document.createRange();
      range.selectNodeContents(element);
      widest = range.getBoundingClientRect().width;
    } else if (wordsWhole) {  // a cell that wraps: its words do not (one wrapped now counts its lines' widths)
      element.querySelectorAll(".word").forEach(function (w) {
        let width = 0;
        Array.from(w.getClientRects()).forEach(function (r) { width += r.width; });
        widest = Math.max(widest, width);
      });
    }
    const frame = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight) + element.offsetWidth - element.clientWidth;
    return Math.ceil(widest + frame) + 1;
  }
  function columnNeed(column, wordsWhole, spec) {
    let need = 0;
    column.getCells().forEach(function (cell) {
      const element = cell.getElement();
      if (element.isConnected) need = Math.max(need, cellNeed(element, wordsWhole));  // drawn rows only
    });
    return Math.min(need, fittedColumnMax(spec));
  }
  // Tabulator's fitColumns: a column declared with a width keeps it; the others share what is left by their
  // widthGrow, none below its minimum (which then keeps it, and the rest is shared again).
  function share(laid, available) {
    laid.forEach(function (c) { c.width = c.min; c.fixed = !c.grow; });
    let shared = laid.filter(function (c) { return c.grow; });
    let room = available - laid.reduce(function (total, c) { return total + (c.grow ? 0 : c.width); }, 0);
    while (shared.length) {
      const grow = shared.reduce(function (total, c) { return total + c.grow; }, 0);
      const above = shared.filter(function (c) { return c.width > (room / grow) * c.grow; });
      if (!above.length) {
        shared.forEach(function (c) { c.width = Math.floor((room / grow) * c.grow); });
        return;
      }
      above.forEach(function (c) { room -= c.width; c.fixed = true; });  // as wide as it needs, no share
      shared = shared.filter(function (c) { return above.indexOf(c) < 0; });
    }
  }
  function sum(laid, key) { return laid.reduce(function (total, c) { return total + c[key]; }, 0); }
  let fitting = false;
  function fitColumns(table, spec) {
    const holder = table.element.querySelector(".tabulator-tableholder");
    if (fitting || !holder) return;
    const declared = {};
    spec.columns.forEach(function (c) { declared[c.field] = c; });
    const available = holder.clientWidth;
    const laid = table.getColumns().filter(function (c) { return c.isVisible(); }).map(function (column) {
      const own = declared[column.getField()] || {};
      const floor = own.width || own.minWidth || 40;
      return { column: column, grow: own.width ? 0 : own.widthGrow || 1, floor: floor,
        whole: Math.max(floor, columnNeed(column, true, spec)), loose: Math.max(floor, columnNeed(column, false, spec)) };
    });
    // Names may wrap only where the declared widths fit and the whole names would not; then the room left
    // goes to the columns whose names would wrap, those that need least first, so that as few wrap as can.
    const tight = sum(laid, "whole") > available && sum(laid, "floor") <= available;
    laid.forEach(function (c) { c.min = tight ? c.loose : c.whole; });
    let left = available - sum(laid, "min");
    laid.slice().sort(function (a, b) { return a.whole - a.min - (b.whole - b.min); }).forEach(function (c) {
      const more = Math.max(0, Math.min(c.whole - c.min, left));
      c.min += more;
      left -= more;
    });
    share(laid, available);
    // the columns whose names wrap: those that did not get the width of their longest name
    const wrapping = laid.filter(function (c) { return c.width < c.whole; }).map(function (c) { return c.column.getField(); }).join(" ");
    let changed = (table.element.dataset.namesWrap || "") !== wrapping;
    if (wrapping) table.element.dataset.namesWrap = wrapping; else delete table.element.dataset.namesWrap;
    laid.forEach(function (c) {
      const def = c.column.getDefinition();  // Tabulator's own object: its layout reads the width from it
      const width = c.fixed ? c.width : undefined;
      if (def.width !== width) { def.width = width; changed = true; }
      if (c.fixed && Math.abs(c.column.getWidth() - c.width) > 1) { c.column.setWidth(c.width); changed = true; }
    });
    if (!changed) return;
    fitting = true;  // the redraw renders again (renderComplete): not a new layout
    try {
      table.getRows().forEach(function (row) { row.normalizeHeight(); });
      table.redraw();
    } finally {
      fitting = false;
    }
  }

  const SORT_MARKS = { none: "↕", asc: "▲", desc: "▼" };
  const FORMATTERS = { deviceLink: deviceLink, pool: pool, badges: badges, taints: taints, state: state,
    allocatable: allocatable, health: health, age: age, claims: claims, pods: pods, joined: joined,
    attributes: attributes };

  // The columns come from the page (inventory/tables.py declares them once); only renderers live here.
  function tableColumns(spec) {
    return spec.columns.map(function (c) {
      const render = FORMATTERS[c.formatter] || plain;
      const def = Object.assign({}, c, {
        formatter: function (cell) { return render(cell, c, spec); },
      });
      delete def.filter;
      return def;
    });
  }

  // "Columns": show or hide any declared column (hidden ones included), remembered in localStorage.
  const COLUMNS_KEY = "dradash.columns.devices";
  function chooseColumns(table, spec) {
    const place = document.querySelector(".toolbar .spacer");
    if (!place || document.getElementById("device-columns")) return;
    let saved = null;
    try { saved = JSON.parse(localStorage.getItem(COLUMNS_KEY) || "null"); } catch (e) { saved = null; }
    const shown = {};
    spec.columns.forEach(function (c) { shown[c.field] = saved && c.field in saved ? saved[c.field] : c.visible !== false; });
    const details = el("details", "col-chooser");
    details.id = "device-columns";
    details.appendChild(el("summary", null, "Columns"));
    const list = el("div", "col-list");
    spec.columns.forEach(function (c, i) {
      const label = el("label");
      const box = el("input");
      box.type = "checkbox";
      box.checked = shown[c.field];
      box.disabled = i === 0 && c.visible !== false;
      box.addEventListener("change", function () {
        shown[c.field] = box.checked;
        if (box.checked) table.showColumn(c.field); else table.hideColumn(c.field);
        // rows take the height of what is shown now (an Attributes cell is several lines)
        table.getRows().forEach(function (row) { row.normalizeHeight(); });
        table.redraw();
        try { localStorage.setItem(COLUMNS_KEY, JSON.stringify(shown)); } catch (e) { /* this page only */ }
      });
      label.append(box, document.createTextNode(" " + c.title));
      list.appendChild(label);
      if (shown[c.field] !== (c.visible !== false)) { if (shown[c.field]) table.showColumn(c.field); else table.hideColumn(c.field); }
    });
    details.appendChild(list);
    place.after(details);
  }
  // Tabulator's sortable headers are divs: make them reachable and usable from the keyboard.
  function keyboardHeaders(holder) {
    holder.querySelectorAll(".tabulator-col.tabulator-sortable").forEach(function (col) {
      col.tabIndex = 0;
      col.addEventListener("keydown", function (e) {
        if (e.key !== "Enter" && e.key !== " ") return;
        e.preventDefault();
        const title = col.querySelector(".tabulator-col-content") || col;
        title.dispatchEvent(new MouseEvent("click", { bubbles: true }));
      });
    });
  }

  function start() {
    const holder = document.getElementById("devices-table");
    const specEl = document.getElementById("device-table-spec");
    if (!holder || !specEl || !window.Tabulator) return;
    const spec = JSON.parse(specEl.textContent);
    stringMax = spec.stringMax || stringMax;
    const count = document.getElementById("device-count");
    if (holder.dataset.invalid) {
      // The server refused these filters and the page says why: there is nothing to load.
      if (count) { count.classList.remove("loading"); count.classList.add("bad-text"); }
      if (count) count.textContent = "No devices shown: these filters cannot be used (see above).";
      return;
    }
    // Page, size and sort live in the page's URL too, so a reload or a shared link shows the same rows.
    const here = new URLSearchParams(location.search);
    const initialSort = here.get("sort") ? [{ column: here.get("sort"), dir: here.get("dir") === "desc" ? "desc" : "asc" }] : [];
    function dataUrl(url, config, params) {
      const query = new URLSearchParams(url.split("?")[1] || "");
      const view = new URLSearchParams(location.search);
      ["page", "size", "sort", "dir"].forEach(function (k) { query.delete(k); view.delete(k); });
      query.set("page", params.page || 1);
      query.set("size", params.size || 100);
      if (params.page > 1) view.set("page", params.page);
      if (params.size && params.size !== 100) view.set("size", params.size);
      const sort = (params.sort || [])[0];
      if (sort) {
        query.set("sort", sort.field);
        query.set("dir", sort.dir);
        view.set("sort", sort.field);
        view.set("dir", sort.dir);
      }
      const shown = view.toString();
      history.replaceState(history.state, "", location.pathname + (shown ? "?" + shown : ""));
      // The exports follow the filters and the sort the table shows (not its page).
      const exported = new URLSearchParams(view);
      ["page", "size", "live", "fragment"].forEach(function (k) { exported.delete(k); });
      ["export-csv", "export-json"].forEach(function (id) {
        const link = document.getElementById(id);
        if (!link) return;
        const base = link.getAttribute("href").split("?")[0];
        link.setAttribute("href", base + (exported.toString() ? "?" + exported.toString() : ""));
      });
      return url.split("?")[0] + "?" + query.toString();
    }
    const table = new Tabulator(holder, {
      ajaxURL: holder.dataset.url,
      ajaxURLGenerator: dataUrl,
      pagination: true,
      paginationMode: "remote",
      sortMode: "remote",
      initialSort: initialSort,
      paginationInitialPage: parseInt(here.get("page"), 10) || 1,
      paginationSize: parseInt(here.get("size"), 10) || 100,
      paginationSizeSelector: [50, 100, 200, 500],
      paginationCounter: "rows",
      maxHeight: "72vh",
      layout: "fitColumns",
      index: "id",
      ajaxResponse: function (url, params, response) {
        if (count) { count.classList.remove("loading", "bad-text"); }
        if (count) {
          count.textContent = response.last_row + (response.last_row === 1 ? " device matches" : " devices match");
          if (response.last_row === 0 && new URLSearchParams(location.search).get("attribute")) {
            count.textContent += " (an attribute's value is matched exactly, case included)";
          }
        }
        return response;
      },
      // Empty without a filter is a cluster where no driver has published a device yet, not a filter's doing.
      placeholder: holder.dataset.filtered === "false"
        ? "No devices in the mirror yet: no ResourceSlice publishes any."
        : "No devices match these filters.",
      columnDefaults: { headerSort: false, tooltip: false, vertAlign: "middle" },
      // The same marks as every other table's sort buttons (.th-sort in dradash.css): ↕ sortable, ▲ / ▼ sorted.
      // The mark is decoration, hidden from screen readers: the header's aria-sort (Tabulator's) says it.
      headerSortElement: function (column, dir) {
        const mark = el("span", null, SORT_MARKS[dir] || SORT_MARKS.none);
        mark.setAttribute("aria-hidden", "true");
        return mark;
      },
      rowFormatter: function (row) {
        const d = row.getData();
        row.getElement().dataset.device = d.driver + "/" + d.pool + "/" + d.device;
      },
      columns: tableColumns(spec),
    });
    table.on("dataLoadError", function (error) {
      if (count) { count.classList.remove("loading"); count.classList.add("bad-text"); }
      if (!count) return;
      const status = error && typeof error.status === "number" ? error.status : 0;
      count.textContent = status >= 400 && status < 500
        ? "The server refused to list devices (HTTP " + status + "): reload the page to see why."
        : "Could not load devices: the server did not answer. Retrying on the next change.";
    });
    // One re-fetch at a time; a change that arrives meanwhile re-fetches once more when it ends.
    let loading = false;
    let again = false;
    function reload() {
      if (loading) { again = true; return; }
      loading = true;
      holder.dataset.liveBusy = "1";
      // Re-fetch the page the user is on (replaceData would jump back to page 1), keeping the scroll.
      const holderEl = holder.querySelector(".tabulator-tableholder");
      const scroll = holderEl ? holderEl.scrollTop : 0;
      let retried = false;
      function done() {
        loading = false;
        delete holder.dataset.liveBusy;
        if (again) { again = false; reload(); }
      }
      function load() {
        table.setPage(table.getPage() || 1).then(function () {
          if (holderEl) holderEl.scrollTop = scroll;
          done();
        }).catch(function () {
          if (retried) { done(); return; }
          retried = true;
          window.setTimeout(load, 1500);
        });
      }
      load();
    }
    holder.addEventListener("live-refresh", reload);
    table.on("tableBuilt", function () { chooseColumns(table, spec); keyboardHeaders(holder); });
    table.on("renderComplete", function () { fitColumns(table, spec); });
    let resizing = 0;  // whether names must wrap depends on the room: look again once a resize is over
    window.addEventListener("resize", function () {
      window.clearTimeout(resizing);
      resizing = window.setTimeout(function () { fitColumns(table, spec); }, 150);
    });
    window.dradashDevicesTable = table;
  }
  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
