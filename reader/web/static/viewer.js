// The PDF viewer's tools: zoom, a page number box, search inside the paper and selectable text.
// The page stays the server's image (paper.js shows it and its passage highlights); this lays the
// page's lines over it as transparent text (GET /api/paper/<id>/page/<n>/words) and draws the
// matches of a search (GET /api/paper/<id>/search?q=) from their rectangles, as fractions of
// the page like the passage highlights. paper.js says which page it shows ("pageshown") and
// shows one when asked ("showpage").
(function () {
  "use strict";
  var viewer = document.getElementById("pdf");
  if (!viewer) { return; }
  var paper = encodeURIComponent(viewer.dataset.paper);
  var frame = document.getElementById("page-frame");
  var scroller = document.getElementById("page-scroll");
  var layer = document.getElementById("text-layer");
  var pageInput = document.getElementById("page-input");
  var zoomLabel = document.getElementById("zoom-level");
  var searchForm = document.getElementById("pdf-search");
  var searchInput = document.getElementById("search-input");
  var countLabel = document.getElementById("search-count");
  var ZOOMS = [0.5, 0.75, 1, 1.25, 1.5, 2, 3];  // times the width that fits the viewer
  // paper.js ran first (both deferred, paper.js is in the head) and may have shown a page already
  var state = { page: parseInt(viewer.dataset.page, 10) || 1, zoom: 1 };
  // the page image is rendered at one of these scales (times 72 dpi; the server keeps it within
  // its render limits): the least that gives a pixel of the screen at least one of the image
  var RENDER_SCALES = [1.5, 2, 3, 4];
  var search = { query: "", matches: [], count: 0, index: -1, truncated: false };
  var words = {};  // page -> its words, or a pending promise

  function pages() { return parseInt(viewer.dataset.pages, 10) || 1; }
  function json(url) {
    return fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); });
  }
  function showPage(n) { viewer.dispatchEvent(new CustomEvent("showpage", { detail: { page: n } })); }

  // ---- zoom ----------------------------------------------------------------------------
  // The vertical scroller: the viewer itself beside the analyses, the window below them.
  function verticalScroller() {
    var style = window.getComputedStyle(viewer);
    return /(auto|scroll)/.test(style.overflowY) && viewer.scrollHeight > viewer.clientHeight ? viewer : null;
  }
  function setZoom(zoom, keepPlace) {
    zoom = Math.max(ZOOMS[0], Math.min(ZOOMS[ZOOMS.length - 1], zoom));
    // keep the point of the page in the middle of what is seen where it is
    var box = frame.getBoundingClientRect();
    var outer = verticalScroller();
    var middleY = outer ? outer.getBoundingClientRect().top + outer.clientHeight / 2 : window.innerHeight / 2;
    var atY = box.height ? (middleY - box.top) / box.height : 0;
    var atX = scroller.scrollWidth ? (scroller.scrollLeft + scroller.clientWidth / 2) / scroller.scrollWidth : 0.5;
    state.zoom = zoom;
    frame.style.width = (zoom * 100) + "%";
    viewer.dataset.zoom = String(zoom);
    zoomLabel.textContent = Math.round(zoom * 100) + "%";
    document.getElementById("zoom-out").disabled = zoom <= ZOOMS[0];
    document.getElementById("zoom-in").disabled = zoom >= ZOOMS[ZOOMS.length - 1];
    remember("zoom", zoom === 1 ? null : String(Math.round(zoom * 100)));
    sharpen();
    if (!keepPlace) { return; }
    scroller.scrollLeft = atX * scroller.scrollWidth - scroller.clientWidth / 2;
    var after = frame.getBoundingClientRect();
    var shift = after.top + Math.max(0, Math.min(1, atY)) * after.height - middleY;
    if (outer) { outer.scrollTop += shift; } else { window.scrollBy(0, shift); }
  }
  // The page and zoom are kept in the address (replaced, not pushed), so a reload and Back keep them.
  function remember(name, value) {
    var url = new URL(window.location.href);
    if (value === null) { url.searchParams.delete(name); } else { url.searchParams.set(name, value); }
    if (url.href !== window.location.href) { history.replaceState(history.state, "", url.href); }
  }

  // The image's scale for the width shown and the screen's pixel ratio: a page shown at 200% is
  // rendered again at twice the pixels, not stretched. paper.js asks for viewer.dataset.scale.
  function neededScale() {
    var img = document.getElementById("page-image");
    var shown = frame.getBoundingClientRect().width * (window.devicePixelRatio || 1);
    var base = parseFloat(viewer.dataset.baseWidth);  // the image's width at scale 1 (72 dpi)
    if (!(base > 0) && img.complete && img.naturalWidth) {
      base = img.naturalWidth / (parseFloat(viewer.dataset.scale) || RENDER_SCALES[0]);
    }
    if (!(base > 0) || !(shown > 0)) { return RENDER_SCALES[0]; }
    viewer.dataset.baseWidth = String(base);
    var wanted = shown / base;
    for (var i = 0; i < RENDER_SCALES.length; i++) { if (RENDER_SCALES[i] >= wanted * 0.98) { return RENDER_SCALES[i]; } }
    return RENDER_SCALES[RENDER_SCALES.length - 1];
  }
  function sharpen() {
    var img = document.getElementById("page-image");
    if (!img || !img.complete || !img.naturalWidth) { return; }
    var scale = neededScale();
    var now = parseFloat(viewer.dataset.scale) || RENDER_SCALES[0];
    if (scale <= now && viewer.dataset.scale) { return; }  // never rendered smaller again
    viewer.dataset.scale = String(scale);
    viewer.dataset.scaleQuery = scale === RENDER_SCALES[0] ? "" : "?scale=" + scale;  // paper.js's next pages too
    var wanted = img.getAttribute("src").replace(/\?.*$/, "") + viewer.dataset.scaleQuery;
    if (img.getAttribute("src") !== wanted) { img.setAttribute("src", wanted); }
  }
  document.getElementById("page-image").addEventListener("load", function () { window.requestAnimationFrame(sharpen); });

  function zoomBy(step) {
    var i = ZOOMS.indexOf(state.zoom);
    setZoom(ZOOMS[Math.max(0, Math.min(ZOOMS.length - 1, i + step))], true);
  }
  document.getElementById("zoom-in").addEventListener("click", function () { zoomBy(1); });
  document.getElementById("zoom-out").addEventListener("click", function () { zoomBy(-1); });
  document.getElementById("zoom-fit").addEventListener("click", function () { setZoom(1, true); });

  // ---- a page number box -----------------------------------------------------------------
  function jump() {
    var n = parseInt(pageInput.value, 10);
    if (!n) { pageInput.value = String(state.page); return; }
    showPage(Math.max(1, Math.min(pages(), n)));
    var outer = verticalScroller();
    if (outer) {
      outer.scrollTop = 0;
      var top = viewer.getBoundingClientRect().top;
      if (top < 0 || top > window.innerHeight / 2) { viewer.scrollIntoView({ block: "start" }); }
    } else {
      viewer.scrollIntoView({ block: "start" });
    }
  }
  pageInput.addEventListener("change", jump);
  pageInput.addEventListener("keydown", function (event) {
    if (event.key === "Enter") { event.preventDefault(); jump(); }
  });

  // ---- selectable text: each line of the page as transparent text over its image --------------
  var measure = document.createElement("canvas").getContext("2d");
  function textWidth(text) { return measure.measureText(text).width / 100; }  // in font sizes

  function lineSpan(line, aspect) {
    var x0 = 1, y0 = 1, x1 = 0, y1 = 0, inked = 0, natural = 0;
    line.forEach(function (w) {
      x0 = Math.min(x0, w[0]); y0 = Math.min(y0, w[1]); x1 = Math.max(x1, w[2]); y1 = Math.max(y1, w[3]);
      inked += w[2] - w[0];
      natural += textWidth(w[4]);
    });
    var size = (y1 - y0) * aspect * 100;  // in cqw: hundredths of the page's shown width
    if (!(size > 0) || !(natural > 0) || size > (x1 - x0) * 100 * 1.5 && line.length === 1 && line[0][4].length > 1) {
      return null;  // empty, or set vertically: left out
    }
    var span = document.createElement("span");
    span.textContent = line.map(function (w) { return w[4]; }).join(" ");
    // the words as wide as the page's, the gaps between them as wide as the page's
    var scale = (inked * 100) / (natural * size);
    var spacing = 0;
    if (line.length > 1) {
      var gap = ((x1 - x0) - inked) * 100 / (line.length - 1);
      spacing = gap / scale - textWidth(" ") * size;
    }
    span.style.left = (x0 * 100) + "%";
    span.style.top = (y0 * 100) + "%";
    span.style.fontSize = size.toFixed(3) + "cqw";
    span.style.wordSpacing = spacing.toFixed(3) + "cqw";
    span.style.transform = "scaleX(" + scale.toFixed(4) + ")";
    return span;
  }

  function drawText(page, data) {
    if (page !== state.page) { return; }
    layer.textContent = "";
    if (!data || !data.words) { viewer.dataset.textLayer = "none"; return; }
    measure.font = "100px " + window.getComputedStyle(layer).fontFamily;
    var lines = [], current = null;
    data.words.forEach(function (w) {
      if (!current || current.id !== w[5]) { current = { id: w[5], words: [] }; lines.push(current); }
      current.words.push(w);
    });
    var made = document.createDocumentFragment();
    lines.forEach(function (line) {
      var span = lineSpan(line.words, data.aspect || 1.294);
      if (span) { made.appendChild(span); made.appendChild(document.createElement("br")); }
    });
    layer.appendChild(made);
    viewer.dataset.textLayer = String(page);
  }

  // A page's words are asked for once its image has come: the image goes first to the render
  // workers that read the words too (reader/web/pdf.py).
  function afterImage(then) {
    var img = document.getElementById("page-image");
    if (img.complete) { then(); return; }
    var done = function () {
      img.removeEventListener("load", done); img.removeEventListener("error", done); then();
    };
    img.addEventListener("load", done);
    img.addEventListener("error", done);
  }

  function loadText(page) {
    layer.textContent = "";
    delete viewer.dataset.textLayer;
    if (words[page] && !words[page].then) { drawText(page, words[page]); return; }
    if (!words[page]) { afterImage(function () { if (page === state.page) { fetchText(page); } }); return; }
    words[page].then(function (data) { drawText(page, data); });
  }

  function fetchText(page) {
    if (!words[page]) {
      words[page] = json("/api/paper/" + paper + "/page/" + page + "/words")
        .then(function (r) { words[page] = r.ok ? r.body : null; return words[page]; })
        .catch(function () { delete words[page]; return null; });
    }
    words[page].then(function (data) { drawText(page, data); });
  }

  // ---- search inside the paper -------------------------------------------------------------
  function drawMatches() {
    frame.querySelectorAll(".search-hit").forEach(function (h) { h.remove(); });
    var current = null;
    search.matches.forEach(function (m, i) {
      if (m.page !== state.page) { return; }
      m.rects.forEach(function (r) {
        var box = document.createElement("div");
        box.className = "search-hit" + (i === search.index ? " current" : "");
        box.style.left = (r[1] * 100) + "%";
        box.style.top = (r[2] * 100) + "%";
        box.style.width = ((r[3] - r[1]) * 100) + "%";
        box.style.height = ((r[4] - r[2]) * 100) + "%";
        frame.appendChild(box);
        if (i === search.index && !current) { current = box; }
      });
    });
    return current;
  }

  function say(text) { countLabel.textContent = text; }

  function go(index) {
    if (!search.matches.length) { return; }
    var n = search.matches.length;
    search.index = (index % n + n) % n;
    var match = search.matches[search.index];
    say((search.index + 1) + " of " + search.count + (search.truncated ? " (the first " + n + " can be shown)" : ""));
    viewer.dataset.searchMatch = String(search.index + 1);
    if (match.page !== state.page) { showPage(match.page); }  // draws the matches when shown
    var hit = drawMatches();
    if (hit) { hit.scrollIntoView({ block: "center", inline: "center" }); }
  }

  function clearSearch() {
    search = { query: "", matches: [], count: 0, index: -1, truncated: false };
    delete viewer.dataset.searchMatch;
    drawMatches();
    say("");
  }

  function find(query, backwards) {
    query = query.trim();
    if (!query) { clearSearch(); return; }
    if (query === search.query && search.matches.length) { go(search.index + (backwards ? -1 : 1)); return; }
    say("Searching…");
    json("/api/paper/" + paper + "/search?q=" + encodeURIComponent(query))
      .then(function (r) {
        if (searchInput.value.trim() !== query) { return; }  // typed on since
        if (!r.ok) { clearSearch(); say(r.body.error || "The search failed."); return; }
        search = { query: query, matches: r.body.matches, count: r.body.count, index: -1, truncated: r.body.truncated };
        if (!search.count) { drawMatches(); say("No matches"); return; }
        // the first match from the page shown on
        var first = search.matches.findIndex(function (m) { return m.page >= state.page; });
        go(first < 0 ? 0 : first);
      })
      .catch(function () { say("The search could not be sent; is the server running?"); });
  }

  searchForm.addEventListener("submit", function (event) { event.preventDefault(); find(searchInput.value, false); });
  document.getElementById("search-prev").addEventListener("click", function () { find(searchInput.value, true); });
  searchInput.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && event.shiftKey) { event.preventDefault(); find(searchInput.value, true); }
    if (event.key === "Escape") { searchInput.value = ""; clearSearch(); }
  });
  searchInput.addEventListener("search", function () { if (!searchInput.value) { clearSearch(); } });

  // ---- the page paper.js shows ---------------------------------------------------------------
  viewer.addEventListener("pageshown", function (event) {
    var changed = event.detail.page !== state.page || !layer.childNodes.length;
    state.page = event.detail.page;
    sayPage();
    remember("page", state.page === 1 ? null : String(state.page));
    if (changed) { keyLines = null; loadText(state.page); }
    drawMatches();
  });

  // ---- keys, while the viewer has the focus --------------------------------------------------
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (!viewer.contains(target) || event.altKey || event.isComposing) { return; }
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "f") {
      event.preventDefault(); searchInput.focus(); searchInput.select(); return;
    }
    var editing = /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName);
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "a" && !editing) {
      event.preventDefault(); selectPage(); return;
    }
    if (event.ctrlKey || event.metaKey || editing || target.closest("#selection-tools")) { return; }
    var key = event.key, wide = scroller.scrollWidth > scroller.clientWidth + 1;
    var handled = true;
    if (event.shiftKey && (key === "ArrowDown" || key === "ArrowUp")) { selectLines(key === "ArrowDown" ? 1 : -1); }
    else if (event.shiftKey && (key === "PageDown" || key === "PageUp")) { moveLines(key === "PageDown" ? 1 : -1); }
    else if (key === "+" || key === "=") { zoomBy(1); }
    else if (key === "-") { zoomBy(-1); }
    else if (key === "0") { setZoom(1, true); }
    else if (key === "/") { searchInput.focus(); }
    else if (key === "PageDown" || key === "ArrowRight" && !wide) { showPage(state.page + 1); }
    else if (key === "PageUp" || key === "ArrowLeft" && !wide) { showPage(state.page - 1); }
    else { handled = false; }
    if (handled) { event.preventDefault(); }
  });

  // ---- copying: the lines joined as text, not as the page's lines --------------------------
  // A word broken at a line's end is made whole ("relat-" "edness" is "relatedness"), lines are
  // joined by a space (none between two Chinese or Japanese characters), ligatures are their
  // letters ("ﬁ" as "fi"). highlights.js takes the selection's text the same way.
  function wide(ch) { return /[\u3000-\u9fff\uac00-\ud7af\uff00-\uffef]/.test(ch || ""); }
  function joinLines(parts) {
    var out = "";
    parts.forEach(function (part) {
      part = part.replace(/[\ufb00-\ufb06]/g, function (c) { return c.normalize("NFKC"); }).replace(/\s+/g, " ").trim();
      if (!part) { return; }
      if (!out) { out = part; return; }
      var last = out.charAt(out.length - 1);
      if (/[a-z]-$/.test(out) && /^[a-z]/.test(part) && !/^(and|or|to)\b/.test(part)) { out = out.slice(0, -1) + part; }
      else if (wide(last) && wide(part.charAt(0))) { out += part; }
      else { out += " " + part; }
    });
    return out;
  }
  // each line of the layer the selection takes in, cut to the selection
  function selectedLines(range) {
    var parts = [];
    layer.querySelectorAll("span").forEach(function (span) {
      var node = span.firstChild;
      if (!node || !range.intersectsNode(node)) { return; }
      var piece = document.createRange();
      piece.selectNodeContents(node);
      if (range.compareBoundaryPoints(Range.START_TO_START, piece) > 0) { piece.setStart(range.startContainer, range.startOffset); }
      if (range.compareBoundaryPoints(Range.END_TO_END, piece) < 0) { piece.setEnd(range.endContainer, range.endOffset); }
      if (!piece.collapsed) { parts.push({ span: span, range: piece, text: piece.toString() }); }
    });
    return parts;
  }
  window.readerViewer = { joinLines: joinLines, selectedLines: selectedLines };
  document.addEventListener("copy", function (event) {
    var selection = window.getSelection();
    if (!selection.rangeCount || selection.isCollapsed || !selection.getRangeAt(0).intersectsNode(layer)) { return; }
    var text = joinLines(selectedLines(selection.getRangeAt(0)).map(function (p) { return p.text; }));
    if (!text || !event.clipboardData) { return; }
    event.clipboardData.setData("text/plain", text);
    event.preventDefault();
  });
  // Ctrl+A (⌘+A) in the viewer selects the page's text, not the whole web page
  function selectPage() {
    var range = document.createRange();
    range.selectNodeContents(layer);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  // ---- selecting with the keyboard: Shift+↓ / Shift+↑ take in the next / previous line ----------
  var keyLines = null;  // { from, to } indices of the layer's lines selected from the keyboard
  function selectLines(step) {
    var spans = layer.querySelectorAll("span");
    if (!spans.length) { return; }
    if (!keyLines) { keyLines = { from: 0, to: step > 0 ? -1 : 0 }; }
    keyLines.to = Math.max(keyLines.from, Math.min(spans.length - 1, keyLines.to + step));
    var range = document.createRange();
    range.setStart(spans[keyLines.from].firstChild || spans[keyLines.from], 0);
    var end = spans[keyLines.to];
    range.setEnd(end.firstChild || end, (end.firstChild || end).length || 0);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    end.scrollIntoView({ block: "nearest" });
  }
  // Shift+Page Down moves the start of the lines selected to the line after them
  function moveLines(step) {
    var spans = layer.querySelectorAll("span");
    if (!spans.length) { return; }
    var at = keyLines ? (step > 0 ? keyLines.to + 1 : keyLines.from - 1) : 0;
    at = Math.max(0, Math.min(spans.length - 1, at));
    keyLines = { from: at, to: at - 1 };
    selectLines(1);
  }
  document.addEventListener("selectionchange", function () {
    var selection = window.getSelection();
    if (!selection.rangeCount || selection.isCollapsed) { keyLines = null; }
  });

  pageInput.setAttribute("autocomplete", "off");  // Back and Forward: no box value left from before
  function sayPage() { pageInput.value = String(state.page); }
  window.addEventListener("pageshow", function () {
    state.page = parseInt(viewer.dataset.page, 10) || state.page;
    sayPage();
  });

  var asked = parseInt(new URLSearchParams(window.location.search).get("zoom"), 10) / 100;
  setZoom(ZOOMS.indexOf(asked) >= 0 ? asked : 1);
  sayPage();
  loadText(state.page);
})();
