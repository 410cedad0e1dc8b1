// One uPlot chart: several labelled lines over shared time, redrawn when the data changes.
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { Series } from "./api";
import { align, seriesLabel } from "./series";

const palette = ["#2a6fdb", "#d9480f", "#2b8a3e", "#862e9c", "#c92a2a", "#1098ad", "#5c940d", "#e67700"];

export function Chart({ title, unit, series }: { title: string; unit: string; series: Series[] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = series.map(seriesLabel).join("|");

  useEffect(() => {
    // No line yet: draw nothing (an empty plot with only a legend reads as broken).
    if (!box.current || series.length === 0) return;
    const opts: uPlot.Options = {
      width: Math.max(320, box.current.clientWidth || 560),
      height: 220,
      series: [
        {},
        ...series.map((s, i) => ({
          label: seriesLabel(s),
          stroke: palette[i % palette.length],
          width: 1.5,
          spanGaps: false,
          value: (_u: uPlot, v: number | null) => (v == null ? "–" : `${v.toFixed(v < 10 ? 2 : 0)} ${unit}`),
        })),
      ],
      axes: [{}, { label: unit, size: 60 }],
      // At least a minute wide: with one or two samples uPlot would otherwise stretch the axis to years.
      scales: { x: { time: true, range: (_u, min, max) => (max - min < 60 ? [max - 60, max] : [min, max]) } },
      legend: { show: true },
    };
    plot.current = new uPlot(opts, align(series) as uPlot.AlignedData, box.current);
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
    // Rebuilt only when the set of lines changes; new points go through setData below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape, unit]);

  useEffect(() => {
    plot.current?.setData(align(series) as uPlot.AlignedData);
  }, [series]);

  return (
    <div class="chart" data-chart={title}>
      <h4>{title}</h4>
      {series.length === 0 ? <p class="note">No samples yet.</p> : null}
      <div ref={box} />
    </div>
  );
}
