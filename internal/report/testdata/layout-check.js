// Injected after the report's own script by TestReportLayoutInChromium: writes one
// line per problem into a pre element, id layout-check (empty: none), then "checked N
// tables, M charts" on the last line.
(function () {
  "use strict";
  var problems = [];
  var main = document.querySelector("main");
  var right = main.getBoundingClientRect().right;
  document.querySelectorAll("table").forEach(function (t) {
    var name = (t.querySelector("caption") || {}).textContent || "table";
    var box = t.parentElement;
    if (box.scrollWidth > box.clientWidth) {
      problems.push("table " + JSON.stringify(name) + ": " + box.scrollWidth + " px wide in a container of " + box.clientWidth);
    }
    if (t.getBoundingClientRect().right > right + 0.5) {
      problems.push("table " + JSON.stringify(name) + " ends past the page's edge");
    }
  });
  // The series' data as ECharts holds it (from a dataset or from data): a series
  // is empty when it has no value on its y dimension that is a number ("-" is NaN).
  function emptySeries(chart) {
    var series = chart.getModel().getSeries();
    if (series.length === 0) return ["(no series)"];
    return series.filter(function (s) {
      var d = s.getData(), y = d.mapDimension("y");
      for (var i = 0; i < d.count(); i++) {
        if (isFinite(d.get(y, i))) return false;
      }
      return true;
    }).map(function (s) { return s.name; });
  }
  var charts = 0;
  function checkChart(el, where) {
    var chart = echarts.getInstanceByDom(el);
    if (!chart) {
      problems.push("chart " + where + " was not drawn");
      return;
    }
    charts++;
    var empty = emptySeries(chart);
    if (empty.length > 0) {
      problems.push("chart " + where + " has series with nothing to draw: " + empty.join(", "));
    }
  }
  document.querySelectorAll(".chart[data-option]").forEach(function (el) {
    checkChart(el, JSON.stringify(el.getAttribute("data-title")));
  });
  // Every choice of every picker, then back to the first.
  document.querySelectorAll(".picker").forEach(function (p) {
    var select = p.querySelector("select");
    for (var i = 0; i < select.options.length; i++) {
      select.selectedIndex = i;
      select.dispatchEvent(new Event("change"));
      p.querySelectorAll(".chart").forEach(function (el) {
        checkChart(el, JSON.stringify(el.getAttribute("data-title")) + " of " + JSON.stringify(select.options[i].text));
      });
    }
    select.selectedIndex = 0;
    select.dispatchEvent(new Event("change"));
  });
  problems.push("checked " + document.querySelectorAll("table").length + " tables, " + charts + " charts");
  var pre = document.createElement("pre");
  pre.id = "layout-check";
  pre.textContent = problems.join("\n");
  document.body.appendChild(pre);
})();
