// Injected after the report page's own script by report_browser_test.sh: what the rendered page
// shows that the DOM alone does not (layout and computed colours), written as JSON into the
// body's data-probe attribute, which `chromium --dump-dom` keeps.
"use strict";
(function () {
  const out = { width: window.innerWidth, page_width: document.documentElement.scrollWidth };
  // The table of ranks: its scrolling box, and the steps and samples/s cells of its first row.
  const box = document.querySelector("details .scroll");
  if (box) {
    const edge = box.getBoundingClientRect();
    out.ranks = { scroll_width: box.scrollWidth, client_width: box.clientWidth, cells: {} };
    const heads = [...box.querySelectorAll("thead th")].map((th) => th.textContent);
    const row = box.querySelector("tbody tr[data-rank]");
    for (const name of ["steps", "samples/s"]) {
      const i = heads.indexOf(name);
      const cell = row && i >= 0 ? row.children[i] : null;
      if (!cell) continue;
      const r = cell.getBoundingClientRect();
      out.ranks.cells[name] = { text: cell.textContent,
                                visible: r.width > 0 && r.left >= edge.left && r.right <= edge.right + 0.5 &&
                                         r.right <= window.innerWidth };
    }
  }
  // The badge and the attempt bars' computed fill.
  const badge = document.querySelector("section.run h2 .state");
  out.badge = badge ? badge.textContent : null;
  out.bars = [...document.querySelectorAll("rect.attempt-bar")].map((r) =>
    ({ class: r.getAttribute("class"), fill: getComputedStyle(r).fill }));
  document.body.setAttribute("data-probe", JSON.stringify(out));
})();
