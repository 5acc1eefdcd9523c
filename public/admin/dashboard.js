// Draws the dashboard's charts from the JSON block the server rendered (no inline script: CSP).
'use strict';

document.addEventListener('DOMContentLoaded', () => {
  const data = JSON.parse(document.getElementById('dashboard-data').textContent);
  const { Chart } = window;
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  const green = '#1e7d32';
  const red = '#b3261e';
  const blue = '#1f5fbf';
  const amber = '#d08b00';
  const draw = (id, config) => {
    const canvas = document.getElementById(id);
    canvas.chart = new Chart(canvas, config);
    canvas.dataset.rendered = 'true';
  };
  draw('chart-rows', {
    type: 'bar',
    data: {
      labels: data.rowsByDay.labels,
      datasets: [
        { label: 'Accepted rows', data: data.rowsByDay.success, backgroundColor: green },
        { label: 'Failed rows', data: data.rowsByDay.failed, backgroundColor: red },
      ],
    },
    options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } },
  });
  draw('chart-journals', {
    type: 'bar',
    data: {
      labels: data.journalsByDay.labels,
      datasets: [
        { label: 'Posted', data: data.journalsByDay.posted, backgroundColor: blue },
        { label: 'Unposted', data: data.journalsByDay.unposted, backgroundColor: amber },
      ],
    },
    options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } },
  });
  draw('chart-posting', {
    type: 'doughnut',
    data: {
      labels: ['Posted', 'Unposted'],
      datasets: [{ data: [data.posting.posted, data.posting.unposted], backgroundColor: [blue, amber] }],
    },
  });
  draw('chart-errors', {
    type: 'line',
    data: {
      labels: data.journalsByDay.labels,
      datasets: [{ label: 'Processing errors', data: data.journalsByDay.errors, borderColor: red, backgroundColor: red }],
    },
    options: { scales: { y: { beginAtZero: true } } },
  });
  draw('chart-processing', {
    type: 'bar',
    data: {
      labels: data.processing.labels,
      datasets: [
        { label: 'Processed', data: data.processing.processed, backgroundColor: green },
        { label: 'Pending', data: data.processing.pending, backgroundColor: amber },
        { label: 'Failed', data: data.processing.failed, backgroundColor: red },
      ],
    },
    options: { indexAxis: 'y', scales: { x: { stacked: true, beginAtZero: true }, y: { stacked: true } } },
  });
});
