/* wick graph viewer: draws the JSON payload (see html.py) as SVG; zoom/pan, search, details,
   highlights, profile heat, and in-place expansion of subgraphs (composites, control flow).

   Layout comes from Graphviz at generation time. Expanding a node does not re-run a layout:
   `geom` stretches the precomputed one around the node with a monotone warp of x and y
   (every distance grows or stays, so boxes that did not overlap still do not), and the
   subgraph's own precomputed layout is drawn inside the stretched box. Collapsing simply
   recomputes from the base layout. Node keys name an instance: "op3" at the top level,
   "op3|decomposition|op1" inside op3's expanded decomposition. */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("wick-data").textContent);
  var svg = document.getElementById("canvas");
  var vp = document.getElementById("viewport");
  var panel = document.getElementById("panel");
  var qbox = document.getElementById("q");
  var qn = document.getElementById("qn");
  var qres = document.getElementById("qres");
  var HEAD = 24, SUBHEAD = 16, PAD = 12, GAP = 22;

  var view = D.views[0];
  var expanded = new Set();
  var selected = null;
  var T = { x: 0, y: 0, k: 1 };
  var G = null; // current geometry of the view
  var pos = new Map(); // node key -> [cx, cy, w, h] absolute
  var matches = [], cur = -1;
  var hl = { transpose: true, qdq: true, float: true, heat: D.profile };

  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c];
    });
  }
  function gname(gid) { return D.graphs[gid].short || D.graphs[gid].title; }
  function r1(v) { return Math.round(v * 10) / 10; }
  function fmt(v) {
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v)) return String(v);
    var a = Math.abs(v);
    if (v === 0 || (a >= 1e-3 && a < 1e5)) return String(+v.toPrecision(4));
    return v.toExponential(3);
  }

  // ------------------------------------------------------------------ instances and keys
  function resolve(key) {
    // key -> {gid, node, index, path}
    var parts = key.split("|"), gid = view, path = "";
    for (var i = 0; ; i += 2) {
      var g = D.graphs[gid], id = parts[i], k = nodeIndex(g, id);
      if (k < 0) return null;
      if (i + 1 >= parts.length) return { gid: gid, node: g.nodes[k], index: k, path: path };
      var sub = g.nodes[k].subs && g.nodes[k].subs[parts[i + 1]];
      if (!sub) return null;
      path += id + "|" + parts[i + 1] + "|";
      gid = sub;
    }
  }
  function nodeIndex(g, id) {
    if (!g._index) {
      g._index = new Map();
      g.nodes.forEach(function (n, i) { g._index.set(n.id, i); });
    }
    var k = g._index.get(id);
    return k === undefined ? -1 : k;
  }

  // ------------------------------------------------------------------------- geometry
  function geom(gid, path, depth) {
    var g = D.graphs[gid];
    var nb = g.nodes.map(function (n) { return [n.x, n.y, n.w, n.h]; });
    var eg = g.edges.map(function (e) {
      return { p: e.p.slice(), a: e.a ? e.a.slice() : null, l: e.l ? e.l.slice() : null };
    });
    var exp = [];
    if (depth < 8) {
      g.nodes.forEach(function (n, i) { if (n.subs && expanded.has(path + n.id)) exp.push(i); });
    }
    exp.sort(function (a, b) { return nb[a][1] - nb[b][1] || nb[a][0] - nb[b][0]; });
    var kids = [];
    exp.forEach(function (i) {
      var n = g.nodes[i], key = path + n.id;
      var parts = Object.keys(n.subs).map(function (role) {
        return { role: role, gid: n.subs[role], g: geom(n.subs[role], key + "|" + role + "|", depth + 1) };
      });
      var W = PAD, H = 0;
      parts.forEach(function (p) { p.ox = W; W += p.g.w + GAP; H = Math.max(H, p.g.h); });
      W = W - GAP + PAD;
      H = HEAD + SUBHEAD + H + PAD;
      var b = nb[i], cx = b[0], cy = b[1], w = b[2], h = b[3];
      var headW = 40 + 6.6 * (n.label.length + (n.sub ? n.sub.length + 3 : 0));
      parts.forEach(function (p) { headW = Math.max(headW, p.ox + 12 + 5.4 * (p.role.length + 3 + gname(p.gid).length)); });
      W = Math.max(W, w, headW); H = Math.max(H, h);
      var x0 = cx - w / 2, x1 = cx + w / 2, y0 = cy - h / 2, y1 = cy + h / 2;
      var dx = W - w, dy = H - h, sx = W / w, sy = H / h;
      var wx = function (x) { return x <= x0 ? x - dx / 2 : x >= x1 ? x + dx / 2 : x0 - dx / 2 + (x - x0) * sx; };
      var wy = function (y) { return y <= y0 ? y : y >= y1 ? y + dy : y0 + (y - y0) * sy; };
      nb.forEach(function (q) { q[0] = wx(q[0]); q[1] = wy(q[1]); });
      nb[i][2] = W; nb[i][3] = H;
      eg.forEach(function (e) {
        for (var k = 0; k < e.p.length; k += 2) { e.p[k] = wx(e.p[k]); e.p[k + 1] = wy(e.p[k + 1]); }
        if (e.a) { e.a[0] = wx(e.a[0]); e.a[1] = wy(e.a[1]); }
        if (e.l) { e.l[0] = wx(e.l[0]); e.l[1] = wy(e.l[1]); }
      });
      kids.push({ i: i, parts: parts });
    });
    if (exp.length) g.edges.forEach(function (e, k) {
      snap(eg[k], nb[e.s], nb[e.t]);
      if (e.l) {
        // a label stays at the same offset from the middle of its (warped) curve
        var m0 = midpoint(e), m1 = midpoint(eg[k]);
        eg[k].l = [m1[0] + e.l[0] - m0[0], m1[1] + e.l[1] - m0[1]];
      }
    });
    // bounding box -> shift to the origin
    var minx = Infinity, miny = Infinity, maxx = -Infinity, maxy = -Infinity;
    nb.forEach(function (b) {
      minx = Math.min(minx, b[0] - b[2] / 2); maxx = Math.max(maxx, b[0] + b[2] / 2);
      miny = Math.min(miny, b[1] - b[3] / 2); maxy = Math.max(maxy, b[1] + b[3] / 2);
    });
    eg.forEach(function (e) {
      for (var k = 0; k < e.p.length; k += 2) {
        minx = Math.min(minx, e.p[k]); maxx = Math.max(maxx, e.p[k]);
        miny = Math.min(miny, e.p[k + 1]); maxy = Math.max(maxy, e.p[k + 1]);
      }
      if (e.l) { minx = Math.min(minx, e.l[0] - 30); maxx = Math.max(maxx, e.l[0] + 30); }
    });
    if (!isFinite(minx)) { minx = miny = 0; maxx = 120; maxy = 40; }
    var M = 6, sx0 = M - minx, sy0 = M - miny;
    nb.forEach(function (b) { b[0] += sx0; b[1] += sy0; });
    eg.forEach(function (e) {
      for (var k = 0; k < e.p.length; k += 2) { e.p[k] += sx0; e.p[k + 1] += sy0; }
      if (e.a) { e.a[0] += sx0; e.a[1] += sy0; }
      if (e.l) { e.l[0] += sx0; e.l[1] += sy0; }
    });
    return { w: maxx - minx + 2 * M, h: maxy - miny + 2 * M, nb: nb, eg: eg, kids: kids };
  }

  // After a warp the border of a box may have moved away from the edge ends: put them back.
  function snap(e, sb, tb) {
    var p = e.p;
    if (p.length < 2) return;
    var sy = p[1] >= sb[1] ? sb[1] + sb[3] / 2 : sb[1] - sb[3] / 2;
    p[0] = Math.min(Math.max(p[0], sb[0] - sb[2] / 2 + 2), sb[0] + sb[2] / 2 - 2);
    p[1] = sy;
    var tip = e.a || [p[p.length - 2], p[p.length - 1]];
    var down = tip[1] <= tb[1];
    var ty = down ? tb[1] - tb[3] / 2 : tb[1] + tb[3] / 2;
    var tx = Math.min(Math.max(tip[0], tb[0] - tb[2] / 2 + 2), tb[0] + tb[2] / 2 - 2);
    if (e.a) {
      e.a = [tx, ty];
      p[p.length - 2] = tx; p[p.length - 1] = down ? ty - 5 : ty + 5;
    } else {
      p[p.length - 2] = tx; p[p.length - 1] = ty;
    }
  }

  // --------------------------------------------------------------------------- render
  function edgePath(e, ox, oy) {
    var p = e.p;
    if (p.length < 4) return "";
    var s = "M" + r1(p[0] + ox) + " " + r1(p[1] + oy);
    if ((p.length / 2 - 1) % 3 === 0) {
      s += "C";
      for (var k = 2; k < p.length; k += 2) s += r1(p[k] + ox) + " " + r1(p[k + 1] + oy) + " ";
    } else {
      for (var j = 2; j < p.length; j += 2) s += "L" + r1(p[j] + ox) + " " + r1(p[j + 1] + oy);
    }
    if (e.a) s += "L" + r1(e.a[0] + ox) + " " + r1(e.a[1] + oy);
    return s;
  }
  function midpoint(e) {
    var p = e.p, n = p.length / 2, m = Math.floor(n / 2);
    if (n % 2 === 0 && n >= 2) return [(p[2 * m - 2] + p[2 * m]) / 2, (p[2 * m - 1] + p[2 * m + 1]) / 2];
    return [p[2 * m], p[2 * m + 1]];
  }
  function heat(share, maxShare) {
    var t = Math.sqrt(Math.min(1, share / (maxShare || 1)));
    var stops = [[255, 245, 235], [253, 174, 107], [230, 85, 13], [165, 15, 21]];
    var x = t * (stops.length - 1), i = Math.min(stops.length - 2, Math.floor(x)), f = x - i;
    var c = stops[i].map(function (v, j) { return Math.round(v + (stops[i + 1][j] - v) * f); });
    return "rgb(" + c.join(",") + ")";
  }
  var maxShare = 0;
  Object.keys(D.graphs).forEach(function (gid) {
    D.graphs[gid].nodes.forEach(function (n) { if (n.prof) maxShare = Math.max(maxShare, n.prof.share); });
  });
  // Text width estimate: the same per-character table as layout.py's _text_width (which sized
  // the boxes), so a label is cut (from the left, "…") only when the box width was capped.
  function tw(s, size, bold) {
    var em = 0;
    for (var i = 0; i < s.length; i++) {
      var ch = s[i];
      if ((ch >= "A" && ch <= "Z") || (ch >= "0" && ch <= "9") || ch === "_" || ch === "\u00D7") em += bold ? 0.74 : 0.68;
      else if ("ijl.,:;|!' ".indexOf(ch) >= 0) em += 0.32;
      else em += bold ? 0.67 : 0.58;
    }
    return em * size;
  }
  function clip(s, w, size, bold) {
    s = String(s);
    if (tw(s, size, bold) <= w - 12) return s;
    var k = 1;
    while (k < s.length - 3 && tw("\u2026" + s.slice(k), size, bold) > w - 12) k++;
    return "\u2026" + s.slice(k);
  }

  function drawGraph(gid, path, g, ox, oy, depth, out) {
    var gr = D.graphs[gid], labelled = new Set();
    gr.edges.forEach(function (e, k) {
      var ge = g.eg[k], sk = path + gr.nodes[e.s].id, tk = path + gr.nodes[e.t].id;
      var d = edgePath(ge, ox, oy);
      if (!d) return;
      out.edges.push('<path class="e" data-s="' + esc(sk) + '" data-t="' + esc(tk) + '" d="' + d + '"/>');
      // Without room reserved by dot, a tensor read by several ops is labelled once.
      var once = gr.labels ? true : !labelled.has(e.s + "/" + e.tensor);
      if (e.label && once) {
        labelled.add(e.s + "/" + e.tensor);
        var lp = ge.l || midpoint(ge);
        out.labels.push('<text class="el" data-s="' + esc(sk) + '" data-t="' + esc(tk) + '" x="' + r1(lp[0] + ox) +
          '" y="' + r1(lp[1] + oy) + '">' + esc(e.label) + "</text>");
      }
    });
    var kidOf = new Map();
    g.kids.forEach(function (kd) { kidOf.set(kd.i, kd); });
    gr.nodes.forEach(function (n, i) {
      var b = g.nb[i], key = path + n.id, cx = b[0] + ox, cy = b[1] + oy, w = b[2], h = b[3];
      var x0 = cx - w / 2, y0 = cy - h / 2;
      pos.set(key, [cx, cy, w, h, n]);
      var cls = (n.tags || []).map(function (t) { return " t-" + t; }).join("");
      var attrs = ' data-key="' + esc(key) + '" data-depth="' + depth + '"' +
        (n.kind === "op" ? ' data-op="' + esc(n.op) + '"' : ' data-io="' + n.kind + '"');
      var kd = kidOf.get(i);
      if (kd) {
        out.frames.push('<g class="fr c-' + n.cat + cls + '"' + attrs + '><rect x="' + r1(x0) + '" y="' + r1(y0) +
          '" width="' + r1(w) + '" height="' + r1(h) + '"/><text class="fh" data-toggle="' + esc(key) + '" x="' +
          r1(x0 + 10) + '" y="' + r1(y0 + 16) + '">\u25BE ' + esc(n.label) + (n.sub ? "  \u00B7 " + esc(n.sub) : "") +
          "</text></g>");
        kd.parts.forEach(function (p) {
          var px = x0 + p.ox, py = y0 + HEAD;
          out.frames.push('<text class="ph" x="' + r1(px + 2) + '" y="' + r1(py + 10) + '">' + esc(p.role) + (gname(p.gid) !== p.role ? " \u00B7 " : "") +
            (gname(p.gid) !== p.role ? esc(gname(p.gid)) : "") + "</text>");
          drawGraph(p.gid, key + "|" + p.role + "|", p.g, px, py + SUBHEAD, depth + 1, out);
        });
        return;
      }
      var style = n.prof ? ' style="--heat:' + heat(n.prof.share, maxShare) +
        (Math.sqrt(n.prof.share / (maxShare || 1)) > 0.6 ? ";--heat-ink:#fff" : "") + '"' : "";
      var s = '<g class="n c-' + n.cat + cls + '"' + attrs + style + ' transform="translate(' + r1(x0) + "," + r1(y0) + ')">' +
        "<title>" + esc(n.op + (n.name ? "\n" + n.name : "")) + "</title>" +
        '<rect width="' + r1(w) + '" height="' + r1(h) + '"/>';
      var two = n.kind === "op" && (n.sub || n.prof);
      s += '<text class="l" x="' + r1(w / 2) + '" y="' + (two ? 14 : h / 2 + 4) + '">' + esc(n.kind === "op" ? clip(n.label, w, 11, true) : clip(n.label, w, 10.5, false)) + "</text>";
      if (n.kind === "op" && n.sub) s += '<text class="s" x="' + r1(w / 2) + '" y="27">' + esc(clip(n.sub, w, 9, false)) + "</text>";
      if (n.prof) s += '<text class="pt" x="' + r1(w / 2) + '" y="27">' + fmt(+n.prof.us.toFixed(1)) + " \u00B5s \u00B7 " +
        (100 * n.prof.share).toFixed(1) + "%</text>";
      if (n.subs) s += '<g class="xp" data-toggle="' + esc(key) + '"><circle cx="' + r1(w - 1) + '" cy="1" r="7"/><text x="' +
        r1(w - 1) + '" y="4.6">+</text></g>';
      out.nodes.push(s + "</g>");
    });
  }

  function render() {
    var t0 = performance.now();
    G = geom(view, "", 0);
    pos.clear();
    var out = { frames: [], edges: [], labels: [], nodes: [] };
    drawGraph(view, "", G, 0, 0, 0, out);
    vp.innerHTML = '<g class="frames">' + out.frames.join("") + '</g><g class="edges">' + out.edges.join("") +
      '</g><g class="elabels">' + out.labels.join("") + '</g><g class="nodes">' + out.nodes.join("") + "</g>";
    applyClasses();
    if (selected && pos.has(selected)) markSelected(selected);
    else selected = null;
    if (qbox.value) search(qbox.value, true);
    xall.textContent = expanded.size ? "collapse all" : "expand all";
    window.__wick.renderMs = performance.now() - t0;
  }

  function applyClasses() {
    svg.classList.toggle("hl-transpose", hl.transpose);
    svg.classList.toggle("hl-qdq", hl.qdq);
    svg.classList.toggle("hl-float", hl.float);
    svg.classList.toggle("heat", !!hl.heat);
    if (G) drawMini();
  }

  // --------------------------------------------------------------------- zoom and pan
  function apply() {
    vp.setAttribute("transform", "translate(" + r1(T.x) + "," + r1(T.y) + ") scale(" + T.k.toFixed(4) + ")");
    svg.classList.toggle("far", T.k < 0.55);
    svg.classList.toggle("vfar", T.k < 0.22);
    updateMini();
  }

  // ---------------------------------------------------------------------- the overview
  // A small canvas with every node as a coloured dot (category, highlight or time) and the
  // visible area as a rectangle; shown only when the graph does not fit the screen.
  var mini = document.getElementById("mini"), mctx = mini.getContext("2d"), mimg = null, ms = 1, mw = 0, mh = 0;
  var CAT = { io: "#344054", conv: "#3b6fd0", act: "#c2514f", pool: "#3a9a5b", norm: "#2f8f83", shape: "#98a2b3",
    math: "#c8a92d", transpose: "#ea7a0c", qdq: "#7c3aed", control: "#0369a1" };
  function miniColor(n) {
    var t = n.tags || [];
    if (hl.float && t.indexOf("float-island") >= 0) return "#dc2626";
    if (hl.heat && n.prof) return heat(n.prof.share, maxShare);
    if (hl.transpose && t.indexOf("transpose") >= 0) return "#ea7a0c";
    if (hl.qdq && t.indexOf("qdq") >= 0) return "#7c3aed";
    return CAT[n.cat] || "#98a2b3";
  }
  function drawMini() {
    var s = size(), dpr = window.devicePixelRatio || 1;
    ms = Math.min(150 / G.w, Math.max(60, s[1] - 24) / G.h, 0.12);
    mw = Math.max(20, Math.ceil(G.w * ms)); mh = Math.max(20, Math.ceil(G.h * ms));
    mini.width = mw * dpr; mini.height = mh * dpr;
    mini.style.width = mw + "px"; mini.style.height = mh + "px";
    mimg = document.createElement("canvas");
    mimg.width = mini.width; mimg.height = mini.height;
    var c = mimg.getContext("2d");
    c.scale(dpr, dpr);
    pos.forEach(function (b, key) {
      var n = b[4];
      if (expanded.has(key)) { // a frame: its outline
        c.strokeStyle = "#0369a1";
        c.strokeRect(b[0] * ms - b[2] * ms / 2, b[1] * ms - b[3] * ms / 2, b[2] * ms, b[3] * ms);
        return;
      }
      c.fillStyle = miniColor(n);
      var w = Math.max(2, b[2] * ms), h = Math.max(1.5, b[3] * ms);
      c.fillRect(b[0] * ms - w / 2, b[1] * ms - h / 2, w, h);
    });
    updateMini();
  }
  function updateMini() {
    if (!mimg) return;
    var s = size();
    var show = G.w * T.k > s[0] + 2 || G.h * T.k > s[1] + 2;
    mini.style.display = show ? "" : "none";
    if (!show) return;
    var dpr = window.devicePixelRatio || 1;
    mctx.setTransform(1, 0, 0, 1, 0, 0);
    mctx.clearRect(0, 0, mini.width, mini.height);
    mctx.drawImage(mimg, 0, 0);
    mctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    var x = -T.x / T.k * ms, y = -T.y / T.k * ms, w = s[0] / T.k * ms, h = s[1] / T.k * ms;
    mctx.fillStyle = "rgba(37,99,235,.12)";
    mctx.strokeStyle = "#2563eb";
    mctx.lineWidth = 1;
    mctx.fillRect(x, y, w, h);
    mctx.strokeRect(x + 0.5, y + 0.5, Math.max(2, w - 1), Math.max(2, h - 1));
  }
  function miniGo(ev) {
    var r = mini.getBoundingClientRect(), s = size();
    var gx = (ev.clientX - r.left) / ms, gy = (ev.clientY - r.top) / ms;
    T.x = s[0] / 2 - gx * T.k; T.y = s[1] / 2 - gy * T.k;
    apply();
  }
  var miniDrag = false;
  mini.addEventListener("pointerdown", function (ev) { ev.stopPropagation(); miniDrag = true; miniGo(ev); });
  window.addEventListener("pointermove", function (ev) { if (miniDrag) miniGo(ev); });
  window.addEventListener("pointerup", function () { miniDrag = false; });
  mini.addEventListener("wheel", function (ev) { ev.preventDefault(); }, { passive: false });
  function size() { var r = svg.getBoundingClientRect(); return [r.width || 800, r.height || 600]; }
  function fit(all) {
    var s = size(), k = Math.min(s[0] / (G.w + 40), s[1] / (G.h + 40), 1.2);
    if (!all && k < 0.55) {
      // A tall graph would be unreadable fitted whole: fit its width, start at the top.
      k = Math.max(0.55, Math.min(1, s[0] / (G.w + 40)));
      T = { k: k, x: (s[0] - G.w * k) / 2, y: 16 };
    } else {
      T = { k: k, x: (s[0] - G.w * k) / 2, y: (s[1] - G.h * k) / 2 };
    }
    apply();
  }
  function zoomAt(f, cx, cy) {
    var k = Math.min(4, Math.max(0.02, T.k * f));
    f = k / T.k;
    T.x = cx - (cx - T.x) * f; T.y = cy - (cy - T.y) * f; T.k = k;
    apply();
  }
  function centerOn(key, minK) {
    var b = pos.get(key);
    if (!b) return;
    var s = size();
    if (minK && T.k < minK) T.k = minK;
    T.x = s[0] / 2 - b[0] * T.k; T.y = s[1] / 2 - b[1] * T.k;
    apply();
  }
  var pending = null;
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = svg.getBoundingClientRect(), f = Math.exp(-ev.deltaY * (ev.deltaMode ? 0.05 : 0.0015));
    if (ev.ctrlKey || !ev.shiftKey) {
      var args = [f, ev.clientX - r.left, ev.clientY - r.top];
      if (pending) { pending[0] *= f; return; }
      pending = args;
      requestAnimationFrame(function () { var a = pending; pending = null; zoomAt(a[0], a[1], a[2]); });
    } else {
      T.x -= ev.deltaY; apply();
    }
  }, { passive: false });
  var drag = null;
  svg.addEventListener("pointerdown", function (ev) {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, tx: T.x, ty: T.y, moved: false };
  });
  window.addEventListener("pointermove", function (ev) {
    if (!drag) return;
    var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    if (!drag.moved) { drag.moved = true; svg.classList.add("drag"); }
    T.x = drag.tx + dx; T.y = drag.ty + dy; apply();
  });
  window.addEventListener("pointerup", function () {
    if (drag && drag.moved) { svg.classList.remove("drag"); setTimeout(function () { drag = null; }, 0); }
    else drag = null;
  });
  svg.addEventListener("click", function (ev) {
    if (drag && drag.moved) return;
    var tg = ev.target.closest("[data-toggle]");
    if (tg) { toggle(tg.getAttribute("data-toggle")); return; }
    var el = ev.target.closest("[data-key]");
    select(el ? el.getAttribute("data-key") : null);
  });
  svg.addEventListener("dblclick", function (ev) {
    var el = ev.target.closest("[data-key]");
    if (!el) { fit(true); return; }
    var r = resolve(el.getAttribute("data-key"));
    if (r && r.node.subs) toggle(el.getAttribute("data-key"));
  });
  document.getElementById("zin").onclick = function () { var s = size(); zoomAt(1.25, s[0] / 2, s[1] / 2); };
  document.getElementById("zout").onclick = function () { var s = size(); zoomAt(0.8, s[0] / 2, s[1] / 2); };
  document.getElementById("fit").onclick = function () { fit(true); };

  // ------------------------------------------------------------- expand and collapse
  function toggle(key, open) {
    var want = open === undefined ? !expanded.has(key) : open;
    if (want === expanded.has(key)) return;
    var before = pos.get(key);
    if (want) expanded.add(key);
    else {
      expanded.delete(key);
      expanded.forEach(function (k) { if (k.indexOf(key + "|") === 0) expanded.delete(k); });
      if (selected && selected.indexOf(key + "|") === 0) selected = key;
    }
    render();
    // keep the toggled node where it was on the screen
    var after = pos.get(key);
    if (before && after) {
      T.x += (before[0] - after[0]) * T.k;
      T.y += (before[1] - before[3] / 2 - (after[1] - after[3] / 2)) * T.k;
      apply();
    }
    if (selected === key) showDetails(key);
  }

  // --------------------------------------------------------------------------- select
  function markSelected(key) {
    vp.querySelectorAll(".sel,.hot").forEach(function (el) { el.classList.remove("sel", "hot"); });
    if (!key) return;
    var sel = vp.querySelectorAll('[data-key="' + cssq(key) + '"]');
    sel.forEach(function (el) { el.classList.add("sel"); });
    vp.querySelectorAll('[data-s="' + cssq(key) + '"],[data-t="' + cssq(key) + '"]').forEach(function (el) {
      el.classList.add("hot");
    });
  }
  function cssq(s) { return s.replace(/["\\]/g, "\\$&"); }
  function select(key) {
    selected = key;
    markSelected(key);
    showDetails(key);
  }
  function goTo(key) {
    // expand every collapsed ancestor, then select and center
    var parts = key.split("|"), changed = false;
    for (var i = 1; i < parts.length; i += 2) {
      var anc = parts.slice(0, i).join("|");
      if (!expanded.has(anc)) { expanded.add(anc); changed = true; }
    }
    if (changed) render();
    select(key);
    centerOn(key, 0.8);
  }

  // -------------------------------------------------------------------------- details
  function kv(rows) {
    return "<table>" + rows.filter(function (r) { return r[1] !== undefined && r[1] !== null && r[1] !== ""; })
      .map(function (r) { return "<tr><td>" + esc(r[0]) + '</td><td class="v">' + r[1] + "</td></tr>"; }).join("") + "</table>";
  }
  function val(v) {
    if (Array.isArray(v)) return esc("[" + v.map(function (x) { return typeof x === "object" ? JSON.stringify(x) : fmt(x); }).join(", ") + "]");
    if (v && typeof v === "object") {
      var ks = Object.keys(v);
      if (ks.length <= 16 && ks.every(function (k) { return v[k] === null || typeof v[k] !== "object"; }))
        return ks.map(function (k) { return esc(k) + ": " + esc(fmt(v[k])); }).join("<br>");
      return "<pre>" + esc(JSON.stringify(v, null, 1)) + "</pre>";
    }
    return esc(fmt(v));
  }
  // TF converters join the names of fused ops with ';': show the first, fold the rest.
  function longName(name) {
    var parts = String(name).split(";");
    if (parts.length < 2) return esc(name);
    return esc(parts[0]) + ' <details class="more"><summary>+' + (parts.length - 1) + " fused names</summary>" +
      parts.slice(1).map(esc).join("<br>") + "</details>";
  }
  function hist(h) {
    if (!h || !h.length) return "";
    var m = Math.max.apply(null, h) || 1, W = 220, H = 28, bw = W / h.length;
    return '<svg class="hist" width="' + W + '" height="' + H + '">' + h.map(function (c, i) {
      var hh = c ? Math.max(1, (c / m) * H) : 0;
      return '<rect x="' + r1(i * bw) + '" y="' + r1(H - hh) + '" width="' + r1(bw - 1) + '" height="' + r1(hh) + '"/>';
    }).join("") + "</svg>";
  }
  function linkTo(path, id) {
    var r = resolve(path + id);
    if (!r) return esc(id);
    return '<a data-go="' + esc(path + id) + '">' + esc(r.node.label) + (r.node.idx !== undefined ? " #" + r.node.idx : "") + "</a>";
  }
  function tensorHtml(t, path) {
    if (t.absent) return '<div class="t"><span class="nm">(optional input absent)</span></div>';
    var s = '<div class="t"><div class="tn">' + longName(t.name) + (t.const ? '<span class="badge">const</span>' : "") + "</div>" +
      '<div class="ts">' + esc(t.shape) + " " + esc(t.dtype) + "</div>";
    var rows = [];
    if (t.q) rows.push(["quant", esc(t.q)]);
    if (t.stats) {
      var st = t.stats;
      if (st.min !== undefined) {
        rows.push(["range", fmt(st.min) + " \u2026 " + fmt(st.max)]);
        rows.push(["mean \u00B1 std", fmt(st.mean) + " \u00B1 " + fmt(st.std)]);
        rows.push(["zeros", (100 * st.zeros).toFixed(1) + "% of " + st.count]);
      } else if (st.count !== undefined) rows.push(["values", String(st.count)]);
      if (st.qmin !== undefined) rows.push(["int range", st.qmin + " \u2026 " + st.qmax + (st.dequantized ? " (stats dequantized)" : "")]);
      if (st.nonfinite) rows.push(["non-finite", String(st.nonfinite)]);
    }
    if (t.extra) Object.keys(t.extra).forEach(function (k) { if (k !== "type") rows.push([k, val(t.extra[k])]); });
    if (t.from) rows.push(["from", linkTo(path, t.from)]);
    if (t.to && t.to.length) rows.push(["to", t.to.slice(0, 12).map(function (id) { return linkTo(path, id); }).join(", ") + (t.to.length > 12 ? " \u2026" : "")]);
    s += rows.length ? kv(rows) : "";
    if (t.stats && t.stats.hist) s += hist(t.stats.hist);
    return s + "</div>";
  }
  var TAGTEXT = { transpose: ["tr", "transpose"], qdq: ["qd", "quantize/dequantize"], "float-island": ["fl", "float island"] };
  function showDetails(key) {
    if (!key) { showOverview(); return; }
    var r = resolve(key);
    if (!r) { showOverview(); return; }
    var n = r.node, h = "";
    h += "<h2>" + esc(n.label) + (n.label !== n.op ? ' <span class="badge">' + esc(n.op) + "</span>" : "") +
      (n.tags || []).map(function (t) { var x = TAGTEXT[t] || ["", t]; return '<span class="badge ' + x[0] + '">' + esc(x[1]) + "</span>"; }).join("") + "</h2>";
    if (n.name) h += '<div class="nm">' + longName(n.name) + "</div>";
    var rows = [];
    if (n.idx !== undefined) rows.push(["operator", "#" + n.idx + " in " + esc(D.graphs[r.gid].title)]);
    if (n.prof) rows.push(["time", fmt(+n.prof.us.toFixed(2)) + " \u00B5s \u00B7 " + (100 * n.prof.share).toFixed(2) + "% \u00B7 rank " + n.prof.rank]);
    if (n.src) rows.push(["source", esc(n.src)]);
    h += kv(rows);
    if (n.subs) {
      h += "<h3>Subgraphs</h3>";
      Object.keys(n.subs).forEach(function (role) {
        h += "<div>" + esc(role) + ": " + esc(D.graphs[n.subs[role]].title) + ' <a data-view="' + esc(n.subs[role]) + '">open alone</a></div>';
      });
      h += '<button data-toggle="' + esc(key) + '">' + (expanded.has(key) ? "Collapse" : "Expand in place") + "</button>";
    }
    if (n.attrs && Object.keys(n.attrs).length) {
      h += "<h3>Attributes</h3>" + kv(Object.keys(n.attrs).map(function (k) { return [k, val(n.attrs[k])]; }));
    }
    if (n.ins && n.ins.length) h += "<h3>" + (n.kind === "output" ? "Tensor" : "Inputs") + "</h3>" + n.ins.map(function (t) { return tensorHtml(t, r.path); }).join("");
    if (n.outs && n.outs.length) h += "<h3>" + (n.kind === "input" ? "Tensor" : "Outputs") + "</h3>" + n.outs.map(function (t) { return tensorHtml(t, r.path); }).join("");
    panel.innerHTML = h;
  }
  function showOverview() {
    var h = "<h2>" + esc(D.title) + "</h2>";
    var meta = D.meta || {};
    h += kv(Object.keys(meta).filter(function (k) { return k !== "profile"; }).map(function (k) { return [k, val(meta[k])]; }));
    var g = D.graphs[view];
    h += "<h3>This view</h3>" + kv([["graph", esc(g.title)], ["operators", String(g.nodes.filter(function (n) { return n.kind === "op"; }).length)]]
      .concat(Object.keys(g.notes || {}).map(function (k) { return [k, val(g.notes[k])]; })));
    var c = viewCounts();
    h += "<h3>Highlights</h3>" + kv([["transposes", String(c.transpose || 0)], ["quantize/dequantize", String(c.qdq || 0)], ["float islands", String(c["float-island"] || 0)]]);
    if (meta.profile) {
      h += "<h3>Profile</h3>" + kv(Object.keys(meta.profile).map(function (k) { return [k, val(meta.profile[k])]; }));
      var top = [];
      Object.keys(D.graphs).forEach(function (gid) {
        D.graphs[gid].nodes.forEach(function (n) { if (n.prof) top.push([gid, n]); });
      });
      top.sort(function (a, b) { return b[1].prof.us - a[1].prof.us; });
      h += "<table>" + top.slice(0, 15).map(function (x) {
        var n = x[1], go = x[0] === view ? '<a data-go="' + esc(n.id) + '">' : '<a data-view="' + esc(x[0]) + '" data-then="' + esc(n.id) + '">';
        return "<tr><td>" + (100 * n.prof.share).toFixed(1) + "%</td><td>" + go + esc(n.label) + " #" + n.idx + "</a> " + fmt(+n.prof.us.toFixed(1)) + " \u00B5s</td></tr>";
      }).join("") + "</table>";
    }
    h += '<h3>Use</h3><div class="help">Drag to pan, wheel to zoom, click a node for its details; ' +
      'double-click or <b>+</b> expands a composite or control-flow op in place. ' +
      '<span class="kbd">/</span> search · <span class="kbd">Enter</span> next match · <span class="kbd">f</span> fit · ' +
      '<span class="kbd">Esc</span> clear. Edge labels show shape and dtype.</div>';
    panel.innerHTML = h;
  }
  panel.addEventListener("click", function (ev) {
    var a = ev.target.closest("[data-go],[data-view],[data-toggle]");
    if (!a) return;
    if (a.hasAttribute("data-toggle")) { toggle(a.getAttribute("data-toggle")); return; }
    if (a.hasAttribute("data-view")) {
      setView(a.getAttribute("data-view"));
      if (a.hasAttribute("data-then")) goTo(a.getAttribute("data-then"));
      return;
    }
    goTo(a.getAttribute("data-go"));
  });

  // --------------------------------------------------------------------------- search
  function allNodes() {
    // every node reachable from the view, with its instance key (through collapsed subgraphs)
    var out = [];
    (function walk(gid, path, depth, seen) {
      D.graphs[gid].nodes.forEach(function (n) {
        out.push({ key: path + n.id, n: n });
        if (n.subs && depth < 8) Object.keys(n.subs).forEach(function (role) {
          var sg = n.subs[role];
          if (seen.indexOf(sg) < 0) walk(sg, path + n.id + "|" + role + "|", depth + 1, seen.concat([sg]));
        });
      });
    })(view, "", 0, [view]);
    return out;
  }
  function search(q, keep) {
    q = q.trim().toLowerCase();
    vp.querySelectorAll(".match,.cur").forEach(function (el) { el.classList.remove("match", "cur"); });
    if (!q) { matches = []; cur = -1; svg.classList.remove("searching"); qn.textContent = ""; qres.classList.remove("open"); return; }
    var prevKey = keep && cur >= 0 && matches[cur] ? matches[cur].key : null;
    matches = allNodes().filter(function (m) {
      var n = m.n;
      return n.op.toLowerCase().indexOf(q) >= 0 || n.label.toLowerCase().indexOf(q) >= 0 ||
        (n.name || "").toLowerCase().indexOf(q) >= 0 || (n.sub || "").toLowerCase().indexOf(q) >= 0 ||
        ("#" + n.idx) === q;
    });
    cur = prevKey ? matches.findIndex(function (m) { return m.key === prevKey; }) : -1;
    svg.classList.add("searching");
    matches.forEach(function (m) {
      var el = vp.querySelector('[data-key="' + cssq(m.key) + '"]');
      if (el) el.classList.add("match");
    });
    if (cur >= 0) markCurrent();
    qn.textContent = matches.length ? (cur >= 0 ? cur + 1 + "/" : "") + matches.length : "no match";
    if (!keep) {
      qres.innerHTML = matches.slice(0, 60).map(function (m, i) {
        return '<div data-i="' + i + '"><b>' + esc(m.n.label) + "</b><span>" + esc(m.n.kind === "op" ? (m.n.idx !== undefined ? "#" + m.n.idx + " " : "") + (m.n.name || "") : m.n.kind) + "</span></div>";
      }).join("") + (matches.length > 60 ? "<div><span>\u2026 " + (matches.length - 60) + " more: Enter steps through all</span></div>" : "");
      qres.classList.toggle("open", matches.length > 0 && document.activeElement === qbox);
    }
  }
  function markCurrent() {
    vp.querySelectorAll(".cur").forEach(function (el) { el.classList.remove("cur"); });
    var m = matches[cur];
    if (!m) return;
    var el = vp.querySelector('[data-key="' + cssq(m.key) + '"]');
    if (el) el.classList.add("cur");
    qn.textContent = cur + 1 + "/" + matches.length;
  }
  function step(d) {
    if (!matches.length) return;
    cur = (cur + d + matches.length) % matches.length;
    var key = matches[cur].key;
    goTo(key);
    markCurrent();
  }
  var qTimer = null;
  qbox.addEventListener("input", function () {
    clearTimeout(qTimer);
    qTimer = setTimeout(function () { search(qbox.value, false); }, 60);
  });
  qbox.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter") { ev.preventDefault(); qres.classList.remove("open"); step(ev.shiftKey ? -1 : 1); }
    else if (ev.key === "Escape") { qbox.value = ""; search("", false); qbox.blur(); }
  });
  qbox.addEventListener("focus", function () { if (matches.length) qres.classList.add("open"); });
  qbox.addEventListener("blur", function () { setTimeout(function () { qres.classList.remove("open"); }, 150); });
  qres.addEventListener("mousedown", function (ev) {
    var d = ev.target.closest("[data-i]");
    if (!d) return;
    ev.preventDefault();
    cur = +d.getAttribute("data-i");
    goTo(matches[cur].key);
    markCurrent();
    qres.classList.remove("open");
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.target === qbox || ev.target.tagName === "SELECT") return;
    if (ev.key === "/") { ev.preventDefault(); qbox.focus(); qbox.select(); }
    else if (ev.key === "f") fit(true);
    else if (ev.key === "+" || ev.key === "=") { var s = size(); zoomAt(1.25, s[0] / 2, s[1] / 2); }
    else if (ev.key === "-") { var s2 = size(); zoomAt(0.8, s2[0] / 2, s2[1] / 2); }
    else if (ev.key === "n" || ev.key === "N") step(ev.shiftKey ? -1 : 1);
    else if (ev.key === "Escape") { qbox.value = ""; search("", false); select(null); }
  });

  // ----------------------------------------------------------------- header and views
  var viewSel = document.getElementById("view");
  function setView(gid) {
    if (!D.graphs[gid]) return;
    view = gid;
    viewSel.value = gid;
    expanded.clear();
    selected = null;
    render();
    fit(false);
    showOverview();
    drawLegend();
  }
  D.views.forEach(function (gid) {
    var o = document.createElement("option");
    o.value = gid;
    var g = D.graphs[gid];
    o.textContent = g.title + " (" + g.nodes.filter(function (n) { return n.kind === "op"; }).length + " ops)";
    viewSel.appendChild(o);
  });
  viewSel.style.display = D.views.length > 1 ? "" : "none";
  viewSel.onchange = function () { setView(viewSel.value); };
  var meta = D.meta || {};
  document.getElementById("title").innerHTML = esc(D.title) +
    (meta.operators !== undefined ? "<small>" + meta.operators + " ops" + (meta.bytes ? " \u00B7 " + (meta.bytes / 1048576).toFixed(2) + " MiB" : "") + "</small>" : "");

  var legend = document.getElementById("legend");
  function viewCounts() {
    // highlights of the current view, its collapsed subgraphs included
    var c = { transpose: 0, qdq: 0, "float-island": 0, expandable: 0 };
    allNodes().forEach(function (m) {
      (m.n.tags || []).forEach(function (t) { c[t] = (c[t] || 0) + 1; });
      if (m.n.subs) c.expandable++;
    });
    return c;
  }
  function legendItem(keyName, tag, color, text, n) {
    if (!n) return "";
    return '<label title="highlight; \u2192 steps through them"><input type="checkbox" data-hl="' + keyName + '"' + (hl[keyName] ? " checked" : "") +
      '><span class="sw" style="border-color:' + color + '"></span>' + text + " (" + n + ')<button class="next" data-tag="' + tag + '">\u2192</button></label>';
  }
  var xall = document.getElementById("xall");
  function drawLegend() {
    var c = viewCounts();
    legend.innerHTML = legendItem("transpose", "transpose", "var(--transpose)", "transpose", c.transpose) +
      legendItem("qdq", "qdq", "var(--qdq)", "quant/dequant", c.qdq) +
      legendItem("float", "float-island", "var(--float)", "float island", c["float-island"]) +
      (D.profile ? '<label><input type="checkbox" data-hl="heat"' + (hl.heat ? " checked" : "") +
        '>time <span class="heatbar"></span></label>' : "");
    xall.style.display = c.expandable ? "" : "none";
    tagPos = {};
  }
  xall.onclick = function () {
    // expand every subgraph of the view (nested ones too), or collapse them all
    if (expanded.size) { expanded.clear(); }
    else allNodes().forEach(function (m) { if (m.n.subs) expanded.add(m.key); });
    render();
    fit(false);
  };
  var tagPos = {};
  legend.addEventListener("click", function (ev) {
    var b = ev.target.closest("[data-tag]");
    if (b) {
      ev.preventDefault();
      var tag = b.getAttribute("data-tag");
      var list = allNodes().filter(function (m) { return (m.n.tags || []).indexOf(tag) >= 0; });
      if (!list.length) return;
      tagPos[tag] = ((tagPos[tag] === undefined ? -1 : tagPos[tag]) + 1) % list.length;
      goTo(list[tagPos[tag]].key);
    }
  });
  legend.addEventListener("change", function (ev) {
    var k = ev.target.getAttribute("data-hl");
    if (!k) return;
    hl[k] = ev.target.checked;
    applyClasses();
  });
  window.addEventListener("resize", function () { apply(); });

  // ---------------------------------------------------------------------------- start
  window.__wick = {
    goTo: goTo, search: function (q) { qbox.value = q; search(q, false); return matches.length; },
    step: step, toggle: toggle, setView: setView, select: select,
    state: function () { return { view: view, expanded: Array.from(expanded), selected: selected, k: T.k, matches: matches.length, cur: cur }; }
  };
  drawLegend();
  render();
  fit(false);
  showOverview();
  window.__wick.readyMs = performance.now(); // since navigation start: parse + script + first draw
  document.documentElement.setAttribute("data-ready", "1");
})();
