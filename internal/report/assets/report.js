// Draws the report's charts with the ECharts inlined above: each .chart element
// names a JSON option block; a picker swaps one run's charts for another's.
(function () {
  "use strict";
  var charts = [];
  // A chart that fails is reported (the page's error trap shows it, after this
  // loop) and the others are still drawn.
  // Axis names sit above their axis' top end, turned towards the plot: centred,
  // the right-hand axis' name would be cut at the chart's edge.
  function placeNames(o) {
    [].concat(o.yAxis || []).forEach(function (a, i) {
      a.nameTextStyle = Object.assign({ align: i ? "right" : "left" }, a.nameTextStyle);
    });
    return o;
  }
  function draw(el, option) {
    try {
      var chart = echarts.getInstanceByDom(el) || echarts.init(el, null, { renderer: "canvas", devicePixelRatio: 2 });
      chart.setOption(placeNames(option()), true);
      if (charts.indexOf(chart) < 0) charts.push(chart);
    } catch (e) {
      setTimeout(function () { throw e; });
    }
  }
  function json(id) { return JSON.parse(document.getElementById(id).textContent); }
  document.querySelectorAll(".chart[data-option]").forEach(function (el) {
    draw(el, function () { return json(el.getAttribute("data-option")); });
  });
  document.querySelectorAll(".picker").forEach(function (p) {
    var slots = p.querySelectorAll(".chart");
    var select = p.querySelector("select");
    var options = null;
    function show(i) {
      slots.forEach(function (el, k) {
        draw(el, function () {
          options = options || json(p.getAttribute("data-options"));
          return options[i][k];
        });
      });
    }
    select.addEventListener("change", function () { show(select.selectedIndex); });
    show(select.selectedIndex);
  });
  // Charts are drawn at the screen's width; a printed page (A4) is narrower, so
  // they are redrawn to it before printing and back to the screen after. Chromium
  // lays the page out for print after beforeprint, so the width is the page's own
  // (A4 less 12 mm margins: 186 mm at 96 px per inch); the print media query
  // catches the layouts that beforeprint misses.
  var pageWidth = Math.floor(186 / 25.4 * 96);
  function toPage() { charts.forEach(function (c) { c.resize({ width: Math.min(pageWidth, c.getDom().clientWidth || pageWidth) }); }); }
  function toScreen() { charts.forEach(function (c) { c.resize({ width: "auto" }); }); }
  window.addEventListener("beforeprint", toPage);
  window.addEventListener("afterprint", toScreen);
  if (window.matchMedia) {
    var print = window.matchMedia("print");
    var onPrint = function (e) { if (e.matches) toPage(); else toScreen(); };
    if (print.addEventListener) print.addEventListener("change", onPrint); else if (print.addListener) print.addListener(onPrint);
  }
  window.addEventListener("resize", function () {
    charts.forEach(function (c) { c.resize(); });
  });
  document.body.setAttribute("data-charts-drawn", String(charts.length));
})();
