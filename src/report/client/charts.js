/*
 * One Chart.js line chart per chart of the report model (see src/report/charts.ts for what each shows).
 * Point counts are written into the DOM (data-points) so tests and readers can check a chart against
 * the run without reading pixels.
 */
(function (S) {
  'use strict';
  // Ten distinct colours before a run's colour repeats (a 3 × 3 seed sweep fits), none the reference grey.
  const PALETTE = [
    '#1f77b4',
    '#d62728',
    '#2ca02c',
    '#ff7f0e',
    '#9467bd',
    '#8c564b',
    '#e377c2',
    '#17becf',
    '#bcbd22',
    '#393b79',
  ];
  const DASHES = [[], [6, 4], [2, 3], [10, 3, 2, 3], [1, 4]];
  const REFERENCE = '#777777';

  // Echo-Trap warnings: a red dashed vertical line at each warned iteration, drawn over every chart.
  const echoTrapPlugin = {
    id: 'starpoEchoTrap',
    afterDatasetsDraw(chart, _args, options) {
      const markers = (options && options.markers) || [];
      const { ctx, chartArea, scales } = chart;
      if (!markers.length || !chartArea) return;
      ctx.save();
      ctx.strokeStyle = '#c00';
      ctx.fillStyle = '#c00';
      ctx.lineWidth = 1.5;
      ctx.setLineDash([4, 3]);
      ctx.font = '10px sans-serif';
      for (const marker of markers) {
        const x = scales.x.getPixelForValue(marker.iteration);
        if (x < chartArea.left - 0.5 || x > chartArea.right + 0.5) continue;
        ctx.beginPath();
        ctx.moveTo(x, chartArea.top);
        ctx.lineTo(x, chartArea.bottom);
        ctx.stroke();
        ctx.fillText('echo trap', x + 3, chartArea.top + 10);
      }
      ctx.restore();
    },
  };

  /** One run: a colour per series. Several runs: a colour per run and a dash pattern per series. */
  function styleOf(series, indexInRun, runIndex, manyRuns) {
    if (series.kind === 'reference') {
      // Dash-dot and translucent: a reference, never mistaken for a dashed metric of another run.
      const colour = (manyRuns && runIndex >= 0 ? PALETTE[runIndex % PALETTE.length] : REFERENCE) + 'aa';
      return { borderColor: colour, borderDash: [12, 3, 2, 3], borderWidth: 1.5 };
    }
    const colour = PALETTE[(manyRuns ? Math.max(0, runIndex) : indexInRun) % PALETTE.length];
    return { borderColor: colour, borderDash: manyRuns ? DASHES[indexInRun % DASHES.length] : [], borderWidth: 2 };
  }

  function datasetsOf(chartModel, runIds) {
    const manyRuns = runIds.length > 1;
    const seen = new Map();
    return chartModel.series.map((series) => {
      const runIndex = runIds.indexOf(series.run); // -1: a reference line all runs share
      const indexInRun = series.kind === 'reference' ? 0 : seen.get(series.run) || 0;
      if (series.kind !== 'reference') seen.set(series.run, indexInRun + 1);
      const style = styleOf(series, indexInRun, runIndex, manyRuns);
      return Object.assign(
        {
          label: series.label,
          data: series.points.map((p) => ({ x: p[0], y: p[1] })),
          backgroundColor: style.borderColor,
          pointRadius: series.kind === 'reference' || series.points.length > 60 ? 0 : 2,
          tension: 0,
        },
        style,
      );
    });
  }

  function optionsOf(chartModel) {
    const y = { title: { display: true, text: chartModel.yLabel } };
    if (chartModel.yMin !== undefined) y.min = chartModel.yMin;
    if (chartModel.yMax !== undefined) y.max = chartModel.yMax;
    return {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: 'nearest', intersect: false },
      scales: { x: { type: 'linear', title: { display: true, text: 'iteration' }, ticks: { precision: 0 } }, y: y },
      plugins: {
        legend: { position: 'bottom', labels: { boxWidth: 18 } },
        title: { display: true, text: chartModel.title },
        starpoEchoTrap: { markers: chartModel.markers },
      },
    };
  }

  /** { label: number of points } for every series of a chart. */
  S.pointCounts = function pointCounts(chartModel) {
    const counts = {};
    for (const series of chartModel.series) counts[series.label] = series.points.length;
    return counts;
  };

  /**
   * The legend sits below the plot inside the same box: with many series (nine runs of a seed sweep make 19 on
   * the success chart) it would squeeze the plot and be cut off. Chart.js gives a bottom legend at most half the
   * box, so the box is twice a legend of one ~22 px row per series (long labels take a row each).
   */
  function boxHeight(chartModel) {
    return Math.max(280, 2 * (22 * chartModel.series.length + 20));
  }

  /** A <figure> with the chart's canvas; the chart is drawn once the figure is in the document. */
  S.chartFigure = function chartFigure(chartModel) {
    const empty = chartModel.series.every((s) => s.points.length === 0);
    return S.el(
      'figure',
      {
        class: 'chart',
        id: 'chart-' + chartModel.id,
        'data-chart': chartModel.id,
        'data-points': JSON.stringify(S.pointCounts(chartModel)),
        'data-markers': JSON.stringify(chartModel.markers.map((m) => m.iteration)),
      },
      S.el(
        'div',
        { class: 'canvas-box', style: 'height: ' + boxHeight(chartModel) + 'px' },
        S.el('canvas', { 'aria-label': chartModel.title, role: 'img' }),
      ),
      empty ? S.el('p', { class: 'empty' }, 'no data for this chart yet') : null,
    );
  };

  S.drawChart = function drawChart(figure, chartModel, runIds) {
    const canvas = figure.querySelector('canvas');
    return new window.Chart(canvas, {
      type: 'line',
      data: { datasets: datasetsOf(chartModel, runIds) },
      options: optionsOf(chartModel),
      plugins: [echoTrapPlugin],
    });
  };
})((window.StarpoReport = window.StarpoReport || {}));
