// Draws the report's charts with the ECharts inlined above: each .chart element
// names a JSON option block; a picker swaps one run's charts for another's.
(function () {
  "use strict";
  var charts = [];
  function draw(el, option) {
    var chart = echarts.getInstanceByDom(el) || echarts.init(el, null, { renderer: "canvas", devicePixelRatio: 2 });
    chart.setOption(option, true);
    if (charts.indexOf(chart) < 0) charts.push(chart);
  }
  function json(id) { return JSON.parse(document.getElementById(id).textContent); }
  document.querySelectorAll(".chart[data-option]").forEach(function (el) {
    draw(el, json(el.getAttribute("data-option")));
  });
  document.querySelectorAll(".picker").forEach(function (p) {
    var options = json(p.getAttribute("data-options"));
    var slots = p.querySelectorAll(".chart");
    var select = p.querySelector("select");
    function show(i) {
      slots.forEach(function (el, k) { draw(el, options[i][k]); });
    }
    select.addEventListener("change", function () { show(select.selectedIndex); });
    show(0);
  });
  // Charts are drawn at the screen's width; a printed page is narrower.
  window.addEventListener("beforeprint", function () {
    charts.forEach(function (c) { c.resize({ width: 680 }); });
  });
  window.addEventListener("afterprint", function () {
    charts.forEach(function (c) { c.resize(); });
  });
  window.addEventListener("resize", function () {
    charts.forEach(function (c) { c.resize(); });
  });
  document.body.setAttribute("data-charts-drawn", String(charts.length));
})();
