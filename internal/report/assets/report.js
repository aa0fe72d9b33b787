// Draws the report's charts with the ECharts inlined above: each .chart element
// names a JSON option block; a picker swaps one run's charts for another's.
(function () {
  "use strict";
  var charts = [];
  // A chart that fails is reported (the page's error trap shows it, after this
  // loop) and the others are still drawn.
  function draw(el, option) {
    try {
      var chart = echarts.getInstanceByDom(el) || echarts.init(el, null, { renderer: "canvas", devicePixelRatio: 2 });
      chart.setOption(option(), true);
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
