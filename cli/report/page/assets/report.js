// dtrain report: draws the page from the model in <script id="dtrain-report-data"> (docs/report.md).
// Charts are inline SVG; nothing is loaded from the network. Numbers in tables arrive formatted
// (plain_number, as in `dtrain stats`); only axis ticks are formatted here.
"use strict";
(function () {
  const SVGNS = "http://www.w3.org/2000/svg";
  const COLORS = { compute: "#4c78a8", comm: "#f58518", data: "#54a24b", total: "#1d2430",
                   band: "#4c78a8", fail: "#d9534f", ok: "#54a24b", ckpt: "#7a5195",
                   running: "#1f4f99", stopped: "#c98a00" };
  const LINE_COLORS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2",
                       "#ff9da6", "#9d755d", "#bab0ac", "#eeca3b", "#1d2430", "#7a5195",
                       "#003f5c", "#ef5675", "#ffa600", "#2f4b7c"];

  function el(tag, attrs, children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    // 0 is a child (rank 0), not "no children".
    for (const c of children === undefined || children === null ? [] : [].concat(children)) {
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // Axis ticks are 1, 2 or 5 times a power of ten: plain decimals, or k/M/G for large ones.
  function tick(v) {
    const a = Math.abs(v);
    if (a >= 1e9) return +(v / 1e9).toPrecision(3) + "G";
    if (a >= 1e6) return +(v / 1e6).toPrecision(3) + "M";
    if (a >= 1e4) return +(v / 1e3).toPrecision(3) + "k";
    return String(+v.toPrecision(3));
  }
  function niceStep(range, count) {
    const raw = range / count;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }
  function finiteMax(arrays) {
    let m = 0;
    for (const a of arrays) for (const v of a) if (v !== null && v > m) m = v;
    return m;
  }
  function table(columns, rows, rowAttrs) {
    const head = el("tr", {}, columns.map((c) => el("th", {}, c)));
    const body = rows.map((r, i) => el("tr", rowAttrs ? rowAttrs(r, i) : {},
                                       r.map((c) => el("td", {}, c === null ? "-" : c))));
    return el("table", {}, [el("thead", {}, head), el("tbody", {}, body)]);
  }
  function none(text) { return el("p", { class: "none" }, text); }

  // A chart over time. opts: width, height, x (bin centres, seconds), xTitle, yTitle, yFormat,
  // yMax, series [{name, values, color, width, dash}], bands [{name, lo, hi, color}],
  // stacked [{name, values, color}] (shares 0..1 stacked), markers [{x, label, color}], connect
  // (lines and bands run across bins without a value: samples sparser than the bins).
  function timeChart(opts) {
    const W = opts.width || 1040, H = opts.height || 230;
    const L = 74, R = 150, T = 14, B = 36;
    const pw = W - L - R, ph = H - T - B;
    const root = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`,
                              "font-size": 11, "font-family": "sans-serif" });
    const xs = opts.x, xMax = xs.length ? xs[xs.length - 1] + (xs[0] || 0) : 1;
    const all = [];
    for (const s of opts.series || []) all.push(s.values);
    for (const b of opts.bands || []) all.push(b.hi);
    const yMax = opts.yMax || finiteMax(all) * 1.05 || 1;
    const step = niceStep(yMax, 4);
    const top = opts.yMax || Math.ceil(yMax / step) * step;
    const X = (v) => L + (pw * v) / xMax, Y = (v) => T + ph * (1 - v / top);
    for (let v = 0; v <= top + 1e-9; v += opts.yMax ? top / 4 : step) {
      root.append(svg("line", { x1: L, x2: L + pw, y1: Y(v), y2: Y(v), stroke: "#e3e6ea" }));
      root.append(svg("text", { x: L - 6, y: Y(v) + 4, "text-anchor": "end", fill: "#5b6573" },
                      (opts.yFormat || tick)(v)));
    }
    const xstep = niceStep(xMax, 8);
    for (let v = 0; v <= xMax; v += xstep) {
      root.append(svg("line", { x1: X(v), x2: X(v), y1: T + ph, y2: T + ph + 4, stroke: "#888" }));
      root.append(svg("text", { x: X(v), y: T + ph + 16, "text-anchor": "middle",
                                fill: "#5b6573" }, tick(v)));
    }
    root.append(svg("line", { x1: L, x2: L + pw, y1: T + ph, y2: T + ph, stroke: "#888" }));
    root.append(svg("text", { x: L + pw / 2, y: H - 4, "text-anchor": "middle" }, opts.xTitle));
    root.append(svg("text", { x: 12, y: T + ph / 2, "text-anchor": "middle",
                              transform: `rotate(-90 12 ${T + ph / 2})` }, opts.yTitle));
    const legend = [];
    // Bands: a polygon per run of bins with values (gaps stay gaps).
    for (const b of opts.bands || []) {
      let run = [];
      const flush = () => {
        if (run.length) {
          const up = run.map((i) => `${X(xs[i])},${Y(b.hi[i])}`);
          const down = run.slice().reverse().map((i) => `${X(xs[i])},${Y(b.lo[i])}`);
          root.append(svg("polygon", { points: up.concat(down).join(" "), fill: b.color,
                                       "fill-opacity": 0.22, stroke: "none" }));
        }
        run = [];
      };
      xs.forEach((_, i) => {
        if (b.hi[i] !== null && b.lo[i] !== null) run.push(i);
        else if (!opts.connect) flush();
      });
      flush();
      legend.push({ name: b.name, color: b.color, band: true });
    }
    if (opts.stacked) {
      const base = xs.map(() => 0);
      for (const s of opts.stacked) {
        let run = [];
        const flush = () => {
          if (run.length) {
            const up = run.map((i) => `${X(xs[i])},${Y(base[i] + s.values[i])}`);
            const down = run.slice().reverse().map((i) => `${X(xs[i])},${Y(base[i])}`);
            root.append(svg("polygon", { points: up.concat(down).join(" "), fill: s.color,
                                         "fill-opacity": 0.8 }));
          }
          run = [];
        };
        xs.forEach((_, i) => (s.values[i] === null ? flush() : run.push(i)));
        flush();
        xs.forEach((_, i) => { if (s.values[i] !== null) base[i] += s.values[i]; });
        legend.push({ name: s.name, color: s.color, band: true });
      }
    }
    for (const s of opts.series || []) {
      let d = "", pen = false;
      s.values.forEach((v, i) => {
        if (v === null) { pen = pen && !!opts.connect; return; }
        d += `${pen ? "L" : "M"}${X(xs[i]).toFixed(1)},${Y(v).toFixed(1)}`;
        pen = true;
      });
      root.append(svg("path", { d: d || "M0,0", fill: "none", stroke: s.color,
                                "stroke-width": s.width || 1.6,
                                "stroke-dasharray": s.dash || "none" }));
      // Few points (samples every few seconds of a short run): each one shown, as a line of one
      // point draws nothing.
      const points = s.values.filter((v) => v !== null).length;
      if (points <= 30) {
        s.values.forEach((v, i) => {
          if (v !== null) root.append(svg("circle", { cx: X(xs[i]), cy: Y(v), r: 2.5, fill: s.color }));
        });
      }
      legend.push({ name: s.name, color: s.color });
    }
    for (const m of opts.markers || []) {
      root.append(svg("line", { x1: X(m.x), x2: X(m.x), y1: T, y2: T + ph, stroke: m.color,
                                "stroke-dasharray": "3,3" }));
      root.append(svg("text", { x: X(m.x) + 3, y: T + 10, fill: m.color }, m.label));
    }
    legend.forEach((g, i) => {
      const y = T + 8 + i * 16;
      root.append(g.band
        ? svg("rect", { x: L + pw + 14, y: y - 6, width: 16, height: 10, fill: g.color,
                        "fill-opacity": 0.5 })
        : svg("line", { x1: L + pw + 14, x2: L + pw + 30, y1: y, y2: y, stroke: g.color,
                        "stroke-width": 2 }));
      root.append(svg("text", { x: L + pw + 36, y: y + 4 }, g.name));
    });
    return el("div", { class: "chart" }, [root]);
  }

  // Mean step time per rank (or group of ranks), stacked: compute, collectives, data loading.
  function splitBars(bars) {
    const W = 1040, H = 230, L = 74, R = 150, T = 14, B = 46;
    const pw = W - L - R, ph = H - T - B;
    const root = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "font-size": 11,
                              "font-family": "sans-serif" });
    const max = finiteMax([bars.map((b) => b.compute + b.comm + b.data)]) * 1.05 || 1;
    const step = niceStep(max, 4), top = Math.ceil(max / step) * step;
    const Y = (v) => T + ph * (1 - v / top);
    for (let v = 0; v <= top + 1e-12; v += step) {
      root.append(svg("line", { x1: L, x2: L + pw, y1: Y(v), y2: Y(v), stroke: "#e3e6ea" }));
      root.append(svg("text", { x: L - 6, y: Y(v) + 4, "text-anchor": "end", fill: "#5b6573" },
                      tick(v * 1000)));
    }
    // A label every few bars, so that the longest ("992-1007") never overlaps the next.
    const bw = pw / bars.length;
    const every = Math.max(1, Math.ceil((Math.max(...bars.map((b) => b.label.length)) * 7 + 8) / bw));
    bars.forEach((b, i) => {
      let base = 0;
      for (const part of ["compute", "comm", "data"]) {
        const v = b[part] || 0;
        root.append(svg("rect", { x: L + i * bw + bw * 0.12, width: bw * 0.76, y: Y(base + v),
                                  height: Y(base) - Y(base + v), fill: COLORS[part] }));
        base += v;
      }
      if (i % every === 0) {
        root.append(svg("text", { x: L + (i + 0.5) * bw, y: T + ph + 14, "text-anchor": "middle",
                                  fill: "#5b6573" }, b.label));
      }
    });
    root.append(svg("text", { x: L + pw / 2, y: H - 6, "text-anchor": "middle" }, "rank"));
    root.append(svg("text", { x: 12, y: T + ph / 2, "text-anchor": "middle",
                              transform: `rotate(-90 12 ${T + ph / 2})` }, "ms per step"));
    [["compute", "compute"], ["comm", "collectives"], ["data", "data loading"]].forEach(
      ([k, name], i) => {
        root.append(svg("rect", { x: L + pw + 14, y: T + 2 + i * 16, width: 16, height: 10,
                                  fill: COLORS[k] }));
        root.append(svg("text", { x: L + pw + 36, y: T + 11 + i * 16 }, name));
      });
    return el("div", { class: "chart" }, [root]);
  }

  // Rows of ranks by time bins, coloured by the mean step time of the row's slowest rank.
  function heatmap(heat, series) {
    const rows = heat.rows.length, bins = series.bins;
    const W = 1040, L = 74, R = 150, T = 12, B = 36;
    const cell = Math.max(2, Math.min(14, Math.floor(360 / rows)));
    // Tall enough for the legend's five swatches however few rows there are.
    const H = Math.max(T + B + cell * rows, T + 112), pw = W - L - R, cw = pw / bins;
    const root = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "font-size": 11,
                              "font-family": "sans-serif" });
    let lo = Infinity, hi = 0;
    for (const r of heat.values) for (const v of r) if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    const color = (v) => {
      const f = hi > lo ? (v - lo) / (hi - lo) : 0;
      // light yellow (fast) to dark red (slow)
      const r = Math.round(255 - 80 * f), g = Math.round(240 - 200 * f), b = Math.round(170 - 140 * f);
      return `rgb(${r},${g},${b})`;
    };
    const labelEvery = Math.ceil(rows / Math.max(1, Math.floor((cell * rows) / 12)));
    heat.values.forEach((r, j) => {
      r.forEach((v, i) => {
        if (v === null) return;
        const rect = svg("rect", { x: L + i * cw, y: T + j * cell, width: cw + 0.3,
                                   height: cell + 0.3, fill: color(v) });
        rect.append(svg("title", {}, `ranks ${heat.rows[j]}: ${tick(v * 1000)} ms per step`));
        root.append(rect);
      });
      if (j % labelEvery === 0) {
        root.append(svg("text", { x: L - 6, y: T + j * cell + Math.min(cell, 12) - 2,
                                  "text-anchor": "end", fill: "#5b6573" }, heat.rows[j]));
      }
    });
    const xMax = bins * series.bin_seconds, xstep = niceStep(xMax, 8);
    for (let v = 0; v <= xMax; v += xstep) {
      root.append(svg("text", { x: L + (pw * v) / xMax, y: T + cell * rows + 16,
                                "text-anchor": "middle", fill: "#5b6573" }, tick(v)));
    }
    root.append(svg("text", { x: L + pw / 2, y: T + cell * rows + 31, "text-anchor": "middle" },
                    `seconds since ${series.start_text}`));
    root.append(svg("text", { x: L + pw + 14, y: T + 12 }, "ms per step"));
    // Step times all alike (within 0.5 %): one colour, one label.
    const steps = hi - lo > 0.005 * hi ? 4 : 0;
    for (let k = 0; k <= steps; k++) {
      const v = steps ? lo + ((hi - lo) * (steps - k)) / steps : hi;
      root.append(svg("rect", { x: L + pw + 14, y: T + 20 + k * 16, width: 16, height: 12,
                                fill: color(v) }));
      root.append(svg("text", { x: L + pw + 36, y: T + 30 + k * 16 },
                      (!steps ? "all " : k === 0 ? "slow " : k === steps ? "fast " : "") + tick(v * 1000)));
    }
    return el("div", { class: "chart" }, [root]);
  }

  function timeAxis(series) {
    return series.total.map((_, i) => (i + 0.5) * series.bin_seconds);
  }

  function jobSection(run) {
    const j = run.job;
    // A job that still runs has not ended: how long it has run so far, and its latest log line.
    const when = j.state === "running"
      ? [["running for", j.wall], ["started", j.start], ["last log line", j.last_line]]
      : [["wall time", j.wall], ["started", j.start], ["ended", j.end]];
    const facts = [["job", j.name + (j.id ? ` (${j.id})` : "")], ["site", j.site],
                   ["nodes", j.nodes], ["ranks", j.ranks], ["ranks per node", j.ranks_per_node],
                   ["attempts", j.attempts], ["exit", j.exit], ...when, ["time lost to failures", j.lost],
                   ["hosts", j.hosts.length > 8 ? `${j.hosts.slice(0, 8).join(", ")} and ${j.hosts.length - 8} more` : j.hosts.join(", ") || "-"]];
    const dl = el("dl", { class: "facts" });
    for (const [k, v] of facts) { dl.append(el("dt", {}, k)); dl.append(el("dd", {}, String(v))); }
    return [dl];
  }

  function throughputSection(run) {
    const s = run.series, out = [];
    if (!run.throughput || !s) return [none("No step records: the ranks recorded no throughput (libdtrain's Meter writes rank-NNNNN.jsonl).")];
    out.push(el("p", {}, `${run.throughput.samples_per_second} samples/s in total ` +
                          `(${run.throughput.samples} samples; the slowest rank stepped for ${run.throughput.slowest_rank_seconds}).`));
    const x = timeAxis(s), xTitle = `seconds since ${s.start_text}`;
    const series = [{ name: "all ranks", values: s.total, color: COLORS.total, width: 2 }];
    s.nodes.forEach(([host, v], i) =>
      series.push({ name: host, values: v, color: LINE_COLORS[i % LINE_COLORS.length] }));
    out.push(timeChart({ x, xTitle, yTitle: "samples/s", series }));
    const lines = Object.entries(s.lines).map(([rank, v], i) =>
      ({ name: `rank ${rank}`, values: v, color: LINE_COLORS[i % LINE_COLORS.length] }));
    const per = lines.length ? lines : [{ name: "median rank", values: s.band.median, color: COLORS.band, width: 2 }];
    out.push(timeChart({ x, xTitle, yTitle: "samples/s per rank", series: per,
                         bands: [{ name: "min to max of ranks", lo: s.band.min, hi: s.band.max, color: COLORS.band }] }));
    if (run.throughput.nodes.length) {
      out.push(el("div", { class: "scroll" }, [table(["node", "ranks", "samples/s"],
                                                      run.throughput.nodes.map((n) => [n.host, n.ranks, n.samples_per_second]))]));
    }
    return out;
  }

  function splitSection(run) {
    const s = run.series;
    if (!run.throughput || !s) return [none("No step records.")];
    const x = timeAxis(s);
    return [
      timeChart({ x, xTitle: `seconds since ${s.start_text}`, yTitle: "% of step time", yMax: 1,
                  yFormat: (v) => `${Math.round(v * 100)} %`,
                  stacked: [{ name: "compute", values: s.split.compute, color: COLORS.compute },
                            { name: "collectives", values: s.split.comm, color: COLORS.comm },
                            { name: "data loading", values: s.split.data, color: COLORS.data }] }),
      splitBars(run.split),
    ];
  }

  function stragglerSection(run) {
    const s = run.series;
    // Named from the collectives' waits (RUN_DIR/arrivals), with the Meter or without.
    const arrivals = run.arrivals ? [el("p", {}, run.arrivals)] : [];
    if (!run.throughput || !s) return [none("No step records."), ...arrivals];
    const out = [heatmap(s.heat, s), ...arrivals];
    if (run.stragglers.length) {
      out.push(el("p", {}, `Stragglers (more than ${run.straggler_threshold} and ${run.straggler_min_excess} a step slower than the median of the others):`));
      out.push(table(["who", "slower by", "a step", "cause", "cause per sample", "others' median", "how sure"],
                     run.stragglers.map((g) => [g.who, g.slower, g.per_step, g.cause, g.cause_per_sample, g.median_per_sample, g.certainty]),
                     () => ({ class: "straggler" })));
    } else {
      out.push(el("p", { class: "note" }, `No straggler: no rank or node is more than ${run.straggler_threshold} and ${run.straggler_min_excess} a step slower than the median of the others.`));
    }
    out.push(el("p", {}, "Slowest ranks by mean step time:"));
    out.push(table(["rank", "host", "mean step", "p95 step"],
                   run.slowest_ranks.map((r) => [r.rank, r.host, r.mean_step, r.p95_step])));
    return out;
  }

  function collectiveSection(run) {
    const out = [];
    // A running job's ranks may be inside a collective now (a hang): it comes first, marked.
    const now = run.in_progress;
    if (now) out.push(el("p", { class: "in-progress", id: `${run.id}-in-progress` }, ["In progress: ", now.text]));
    if (run.collectives.length || now) {
      const rows = run.collectives.map((c) => [c.collective, c.at, c.seconds, c.waited, c.last_rank, c.ranks]);
      if (now) rows.unshift(now.row);
      out.push(table(["collective", "started", "first enter to last exit", "waited for the last rank", "last rank in", "ranks"],
                     rows, (r, i) => (now && i === 0 ? { class: "in-progress" } : {})));
    } else {
      out.push(none("No collective heartbeats (metric schema v2 \"coll\" records) in this run."));
    }
    out.push(el("p", { class: "note" }, "Time each rank waited in dtrain's collectives is its comm % in the table of ranks below."));
    for (const n of run.notes || []) out.push(el("p", { class: "note" }, `note: ${n}`));
    return out;
  }

  function checkpointSection(run) {
    if (!run.checkpoints.length) return [none("No checkpoint records (checkpoints.jsonl).")];
    const out = [];
    // Records written before 2026-11-28 have no duration: say so rather than show a column of gaps.
    if (run.checkpoints.some((c) => c.took === "not recorded")) {
      out.push(el("p", { class: "note" }, "How long a save took is not recorded for saves written by an older dtrain; the time since the previous save is."));
    }
    out.push(table(["time", "step", "ranks", "took", "size", "since previous", "path"],
                   run.checkpoints.map((c) => [c.time, c.step, c.world, c.took, c.size, c.since_previous, c.path]),
                   () => ({ class: "checkpoint" })));
    return out;
  }

  // Attempts as bars on one time axis, checkpoints as ticks, the culprit's failure as a marker.
  function failureTimeline(run) {
    const f = run.failures, s = run.series;
    const points = [];
    for (const a of f.attempts) if (a.t0 !== undefined) points.push(a.t0, a.t1);
    const current = f.current && f.current.t0 !== undefined ? f.current : null;
    if (current) points.push(current.t0, current.t1);
    for (const c of run.checkpoints) if (c.t !== undefined) points.push(c.t);
    if (f.culprit) points.push(f.culprit.t);
    if (s) points.push(s.start, s.start + s.bins * s.bin_seconds);
    if (points.length < 2) return null;
    const t0 = Math.min(...points), t1 = Math.max(...points), span = t1 - t0 || 1;
    const W = 1040, L = 90, R = 122, pw = W - L - R, H = 92;
    const X = (t) => L + (pw * (t - t0)) / span;
    const root = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "font-size": 11,
                              "font-family": "sans-serif" });
    root.append(svg("text", { x: L - 6, y: 28, "text-anchor": "end" }, "attempts"));
    // A bar's colour is its attempt's state, as the badge says it: red only for one that ended failed.
    const bar = (t0, t1, state, label, title) => {
      const r = svg("rect", { x: X(t0), y: 16, width: Math.max(2, X(t1) - X(t0)), height: 18,
                              class: `attempt-bar attempt-${state}`, fill: COLORS[state] || COLORS.ok, "fill-opacity": 0.75 });
      r.append(svg("title", {}, title));
      root.append(r);
      root.append(svg("text", { x: X(t0) + 3, y: 29, fill: "#fff" }, label));
    };
    for (const a of f.attempts) {
      if (a.t0 === undefined) continue;
      const ok = a.outcome === "completed";
      bar(a.t0, a.t1, ok ? "ok" : "fail", `#${a.attempt} ${a.outcome}`, `attempt ${a.attempt}: ${a.outcome} (status ${a.status}) ${a.cause}`);
    }
    if (current) {
      bar(current.t0, current.t1, "running", f.attempts.length ? `#${current.attempt} running` : "running",
          `attempt ${current.attempt}: running (no end record yet)`);
    } else if (!f.attempts.length && s) {
      const state = { failed: "fail", stopped: "stopped" }[run.job.state] || "ok";
      bar(s.start, s.start + s.bins * s.bin_seconds, state, "steps", `the steps of the job: ${run.job.state}`);
    }
    root.append(svg("text", { x: L - 6, y: 54, "text-anchor": "end" }, "checkpoints"));
    for (const c of run.checkpoints) {
      if (c.t === undefined) continue;
      const m = svg("rect", { x: X(c.t) - 1, y: 44, width: 3, height: 14, fill: COLORS.ckpt });
      m.append(svg("title", {}, `step ${c.step} at ${c.time}`));
      root.append(m);
    }
    if (f.culprit) {
      root.append(svg("line", { x1: X(f.culprit.t), x2: X(f.culprit.t), y1: 10, y2: 66, stroke: COLORS.fail, "stroke-width": 2 }));
      root.append(svg("text", { x: Math.min(X(f.culprit.t), L + pw - 120), y: 80, fill: COLORS.fail },
                      `rank ${f.culprit.rank} ${f.culprit.how}`));
    }
    root.append(svg("text", { x: L + pw + 14, y: 28 }, `${span.toFixed(1)} s in all`));
    return el("div", { class: "chart" }, [root]);
  }

  function failureSection(run) {
    const f = run.failures, out = [];
    const tl = failureTimeline(run);
    if (tl) out.push(tl);
    if (f.culprit) {
      const c = f.culprit;
      out.push(el("div", { class: "culprit-box", id: `${run.id}-culprit` }, [
        el("strong", {}, `First failure: rank ${c.rank} on ${c.host} ${c.how}`), ` at ${c.time}`,
        el("div", { class: "note" }, `why this rank: ${c.reason}`),
        c.line ? el("div", {}, ["error line: ", el("code", {}, c.line)]) : "",
        c.last_line ? el("div", {}, ["last line: ", el("code", {}, c.last_line)]) : ""]));
      if (f.same_error_count) {
        out.push(el("p", {}, `Also culprits (${f.same_error_count} ranks failed on their own with the same error line):`));
        out.push(table(["rank", "host", "how", "time"], f.same_error.map((v) => [v.rank, v.host, v.how, v.time])));
      }
      if (f.victim_count) {
        out.push(el("p", {}, `Victims (${f.victim_count} other failing ranks${f.victim_count > f.victims_listed ? `, the first ${f.victims_listed} listed` : ""}; ranks that ended alike share a row):`));
        out.push(table(["rank", "host", "how", "time", "line"],
                       f.victims.map((v) => [v.rank, v.host, v.how, v.time, v.line || ""])));
      }
    } else if (f.stopped_count) {
      out.push(el("p", { id: `${run.id}-culprit` }, `No rank failed on its own: ${f.stopped_count} ranks were stopped by the launcher or scheduler${f.walltime_reached ? " when the job reached its walltime" : ""}; no rank is blamed.`));
    } else {
      const earlier = f.attempts.filter((a) => a.outcome !== "completed").length;
      const text = run.job.state === "running" ? "No rank has failed so far"
                                               : run.job.state === "queued" ? "No rank has started" : "No rank failed";
      out.push(el("p", { class: "note", id: `${run.id}-culprit` },
                  earlier ? `${text} in the attempt that ended the job; the earlier attempts and why they ended are below.` : `${text}.`));
    }
    if (f.attempts.length) {
      out.push(el("p", {}, "Attempts:"));
      out.push(el("div", { class: "scroll" }, [
        table(["attempt", "start", "end", "status", "outcome", "ranks", "cause"],
              f.attempts.map((a) => [a.attempt, a.start, a.end, a.status, a.outcome, a.ranks, a.cause]),
              () => ({ class: "attempt" }))]));
    }
    if (f.lost.length) {
      out.push(el("p", {}, `Time lost to failures: ${run.job.lost}`));
      out.push(table(["attempt", "crash", "from checkpoint step", "work redone", "restart", "lost"],
                     f.lost.map((l) => [l.attempt, l.crash, l.checkpoint_step, l.redone, l.restart, l.lost])));
    }
    return out;
  }

  function resourceSection(run) {
    const s = run.series;
    if (!s || !s.resources) {
      return [el("p", { class: "none", id: `${run.id}-resources` },
                 "Resource use: not recorded (the metric files hold no \"type\":\"resource\" samples).")];
    }
    const r = s.resources, x = timeAxis(s), xTitle = `seconds since ${s.start_text}`;
    const chart = (band, yTitle, scale, unit) => timeChart({
      x, xTitle, yTitle, height: 190, connect: true,
      series: [{ name: "median rank", values: band.median.map((v) => (v === null ? null : v / scale)), color: COLORS.band, width: 2 }],
      bands: [{ name: "min to max of ranks", lo: band.min.map((v) => (v === null ? null : v / scale)),
                hi: band.max.map((v) => (v === null ? null : v / scale)), color: COLORS.band }],
      yFormat: (v) => tick(v) + unit });
    // Bytes in GiB, or MiB when under 2 GiB.
    const memory = (band, yTitle) => {
      const gib = finiteMax([band.max]) >= 2 * (1 << 30);
      return chart(band, yTitle, gib ? 1 << 30 : 1 << 20, gib ? " GiB" : " MiB");
    };
    const out = [el("div", { id: `${run.id}-resources` }, [
      chart(r.cpu_percent, "CPU % (of one core)", 1, ""), memory(r.rss_bytes, "resident memory")])];
    if (r.gpu) {
      out.push(chart(r.gpu_util_percent, "GPU utilisation %", 1, ""));
      out.push(memory(r.gpu_memory_bytes, "GPU memory"));
      out.push(chart(r.gpu_power_watts, "GPU power", 1, " W"));
    } else {
      out.push(el("p", { class: "note" }, "GPU: not recorded (no GPU fields in the samples: no NVIDIA management library on the nodes)."));
    }
    return out;
  }

  // The stacks the hang watch took, merged into one tree: each heading names the ranks with a
  // thread in the frames below it, so the rank that is elsewhere is a branch of its own.
  function stacksSection(run) {
    const s = run.stacks;
    return [el("p", {}, `The hang watch took the stacks of ranks ${s.ranks} at ${s.taken} (RUN_DIR/stacks; dtrain logs --hang prints the same):`),
            el("pre", { class: "stacks", id: `${run.id}-stacks` }, s.tree)];
  }

  // The table of ranks, 64 rows a page past 64 ranks (a 1,024-rank table was 2,048 rows to scroll
  // through), with the ranks that matter above the pages, always shown: the culprits and the
  // stragglers (a straggler node's ranks).
  const RANKS_PAGE = 64;
  function ranksSection(run) {
    const t = run.ranks, endCol = t.columns.length - 1;
    // Where a rank ran (its cores, CUDA_VISIBLE_DEVICES and NIC variables) goes on a line of its
    // own under the rank's row: as columns, the NIC variables pushed steps and samples/s out of a
    // page 1280 pixels wide.
    const placed = ["cores", "CUDA_VISIBLE_DEVICES", "NIC"].map((c) => t.columns.indexOf(c)).filter((i) => i >= 0);
    const shown = t.columns.map((_, i) => i).filter((i) => !placed.includes(i));
    const culprit = (r) => String(r[endCol]).startsWith("culprit");
    const rowEls = (r, extra) => {
      const out = [el("tr", { "data-rank": r[0], class: (culprit(r) ? "culprit" : "") + (placed.length ? " placed" : "") + extra },
                      shown.map((i) => el("td", {}, r[i] === null ? "-" : r[i])))];
      if (!placed.length) return out;
      const where = [];
      for (const i of placed) {
        if (where.length) where.push("; ");
        where.push(el("span", { class: `binding-${t.columns[i] === "CUDA_VISIBLE_DEVICES" ? "gpus" : t.columns[i].toLowerCase()}` },
                      `${t.columns[i]}: ${r[i]}`));
      }
      out.push(el("tr", { class: "binding", "data-binding-rank": r[0] }, [el("td", {}, ""), el("td", { colspan: shown.length - 1 }, where)]));
      return out;
    };
    const head = el("thead", {}, el("tr", {}, shown.map((i) => el("th", {}, t.columns[i]))));
    const paged = t.rows.length > RANKS_PAGE;
    const body = el("tbody", {}, paged ? [] : t.rows.flatMap((r) => rowEls(r, "")));
    const parts = [];
    let summary = `${t.rows.length} ranks`;
    if (paged) {
      const slow = new Set(t.slow || []);
      const pinned = t.rows.filter((r) => culprit(r) || slow.has(r[0]));
      const pages = Math.ceil(t.rows.length / RANKS_PAGE);
      const label = el("span", { class: "pager-label" }, "");
      const prev = el("button", { type: "button", class: "pager-prev" }, "previous");
      const next = el("button", { type: "button", class: "pager-next" }, "next");
      const pick = el("select", { class: "pager-pick" }, [...Array(pages).keys()].map((p) =>
        el("option", { value: p }, `ranks ${t.rows[p * RANKS_PAGE][0]}-${t.rows[Math.min(t.rows.length, (p + 1) * RANKS_PAGE) - 1][0]}`)));
      let page = 0;
      const show = (p) => {
        page = Math.max(0, Math.min(pages - 1, p));
        body.replaceChildren(...t.rows.slice(page * RANKS_PAGE, (page + 1) * RANKS_PAGE).flatMap((r) => rowEls(r, "")));
        label.textContent = ` page ${page + 1} of ${pages} `;
        prev.disabled = page === 0;
        next.disabled = page === pages - 1;
        pick.value = String(page);
      };
      prev.addEventListener("click", () => show(page - 1));
      next.addEventListener("click", () => show(page + 1));
      pick.addEventListener("change", () => show(Number(pick.value)));
      show(0);
      summary += `, ${RANKS_PAGE} a page`;
      if (pinned.length) {
        summary += "; the culprits and stragglers first";
        const cells = [el("td", { colspan: shown.length }, "The culprits and the stragglers; every rank is in the pages below:")];
        parts.push(el("table", { class: "pinned" }, [head.cloneNode(true), el("tbody", {}, [el("tr", { class: "pinned-note" }, cells), ...pinned.flatMap((r) => rowEls(r, " pinned"))])]));
      }
      parts.push(el("div", { class: "pager" }, [prev, label, next, " ", pick]));
    }
    parts.push(el("table", {}, [head, body]));
    const details = el("details", { open: "" },
                       [el("summary", {}, summary), el("div", { class: "scroll" }, parts)]);
    const where = t.bindings
      ? "The cores, CUDA_VISIBLE_DEVICES and NIC variables each rank had when its Meter opened, from its binding record."
      : "The cores and NIC a rank was bound to are not recorded in this run directory (no binding records: a dtrain before 2026-11-28, or no Meter; dtrain topo shows the plan).";
    return [details, el("p", { class: "note", id: `${run.id}-binding-note` },
                        `Host and local rank from each rank's start line; the GPU from its resource samples. ${where}`)];
  }

  function runSection(run) {
    const sec = el("section", { class: "run", id: run.id });
    sec.append(el("h2", {}, [run.label, el("span", { class: `state state-${run.job.state}` }, run.job.state)]));
    sec.append(el("p", { class: "note" }, run.run_dir));
    const parts = [["Job", jobSection], ["Throughput", throughputSection],
                   ["Step time: compute, collectives, data loading", splitSection],
                   ["Stragglers", stragglerSection], ["Collectives", collectiveSection],
                   ["Checkpoints", checkpointSection], ["Failures and restarts", failureSection],
                   ["Stacks", stacksSection], ["Resource use", resourceSection], ["Ranks", ranksSection]];
    for (const [title, make] of parts) {
      if (title === "Stacks" && !run.stacks) continue;  // the hang watch took none
      sec.append(el("h3", {}, title));
      for (const node of make(run)) sec.append(node);
    }
    return sec;
  }

  // Samples/s against ranks, measured and ideal (linear from the smallest run).
  function scalingChart(group) {
    const rows = group.rows, base = rows[0];
    const W = 560, H = 260, L = 62, R = 24, T = 14, B = 36, pw = W - L - R, ph = H - T - B;
    const maxRanks = Math.max(...rows.map((r) => r.ranks));
    const ideal = (n) => (base.samples_per_second * n) / base.ranks;
    const yMax = Math.max(ideal(maxRanks), ...rows.map((r) => r.samples_per_second)) * 1.08;
    const step = niceStep(yMax, 4), top = Math.ceil(yMax / step) * step;
    const xTop = maxRanks * 1.08;
    const X = (n) => L + (pw * n) / xTop, Y = (v) => T + ph * (1 - v / top);
    const root = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "font-size": 11, "font-family": "sans-serif" });
    for (let v = 0; v <= top + 1e-9; v += step) {
      root.append(svg("line", { x1: L, x2: L + pw, y1: Y(v), y2: Y(v), stroke: "#e3e6ea" }));
      root.append(svg("text", { x: L - 6, y: Y(v) + 4, "text-anchor": "end", fill: "#5b6573" }, tick(v)));
    }
    for (const r of rows) {
      root.append(svg("text", { x: X(r.ranks), y: T + ph + 16, "text-anchor": "middle", fill: "#5b6573" }, r.ranks));
    }
    root.append(svg("line", { x1: X(0), y1: Y(0), x2: X(maxRanks), y2: Y(ideal(maxRanks)), stroke: "#999", "stroke-dasharray": "5,4" }));
    root.append(svg("path", { d: rows.map((r, i) => `${i ? "L" : "M"}${X(r.ranks)},${Y(r.samples_per_second)}`).join(""),
                              fill: "none", stroke: COLORS.compute, "stroke-width": 2 }));
    for (const r of rows) {
      root.append(svg("circle", { cx: X(r.ranks), cy: Y(r.samples_per_second), r: 4, fill: COLORS.compute }));
      root.append(svg("text", { x: X(r.ranks) + 6, y: Y(r.samples_per_second) - 6 }, r.efficiency_text));
    }
    root.append(svg("text", { x: L + pw / 2, y: H - 4, "text-anchor": "middle" }, "ranks"));
    root.append(svg("text", { x: 12, y: T + ph / 2, "text-anchor": "middle", transform: `rotate(-90 12 ${T + ph / 2})` }, "samples/s"));
    root.append(svg("text", { x: L + 8, y: T + 10, fill: "#777" }, "dashed: ideal (linear from the smallest run)"));
    return el("div", { class: "chart" }, [root]);
  }

  function scalingSection(groups, runs) {
    const idOf = Object.fromEntries(runs.map((r) => [r.label, r.id]));
    const sec = el("section", { class: "scaling", id: "scaling" }, [el("h2", {}, "Scaling")]);
    for (const g of groups) {
      sec.append(el("h3", {}, `${g.job}: against the smallest run (${g.baseline})`));
      if (g.mixed_jobs) sec.append(el("p", { class: "note" }, "note: the runs are of different jobs"));
      sec.append(scalingChart(g));
      const tab = el("table", {}, [el("thead", {}, el("tr", {}, ["run", "ranks", "GPUs", "samples/s", "speedup", "efficiency"].map((c) => el("th", {}, c))))]);
      const body = el("tbody");
      for (const r of g.rows) {
        body.append(el("tr", { "data-run": r.run }, [
          el("td", {}, el("a", { href: `#${idOf[r.run]}` }, r.run)), el("td", {}, r.ranks),
          el("td", {}, r.gpus === null ? "-" : r.gpus), el("td", {}, r.samples_per_second_text),
          el("td", {}, r.speedup_text), el("td", { class: "efficiency" }, r.efficiency_text)]));
      }
      tab.append(body);
      sec.append(tab);
      if (g.left_out.length) sec.append(el("p", { class: "note" }, `left out (no throughput): ${g.left_out.join(", ")}`));
    }
    return sec;
  }

  function render() {
    const model = JSON.parse(document.getElementById("dtrain-report-data").textContent);
    const main = document.querySelector("main");
    if (model.runs.length > 1) {
      main.append(el("nav", { class: "runs" }, model.runs.map((r) => el("a", { href: `#${r.id}` }, r.label))));
    }
    if (model.scaling.length) main.append(scalingSection(model.scaling, model.runs));
    for (const run of model.runs) main.append(runSection(run));
    document.body.setAttribute("data-rendered", "yes");
  }

  // The browser test reads these attributes: any script error fails it.
  window.addEventListener("error", (e) => {
    document.body.setAttribute("data-js-error", String(e.message));
  });
  try {
    render();
  } catch (e) {
    document.body.setAttribute("data-js-error", String(e && e.stack ? e.stack : e));
    throw e;
  }
})();
