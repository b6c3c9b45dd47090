// The latency heatmaps of stored runs (time on x, log latency bands on y, records as colour), from
// the histograms each sample stored; one run's (heatmap-publish, heatmap-e2e) or a comparison's.
import { heatmapCharts, type RunHeatmapInputs } from '@kbench/charts';
import { useEffect, useMemo, useState } from 'react';
import { api } from '../api';
import { ChartGrid } from './RunCharts';

export function LatencyHeatmaps({ runs }: { runs: { id: string; label: string }[] }) {
  const [inputs, setInputs] = useState<RunHeatmapInputs[] | null>(null);
  const key = runs.map((r) => `${r.id}:${r.label}`).join(',');
  // biome-ignore lint/correctness/useExhaustiveDependencies: the runs are named by `key`
  useEffect(() => {
    let live = true;
    Promise.all(runs.map((r) => api.heatmap(r.id))).then(
      (answers) => {
        if (live) setInputs(runs.map((r, i) => ({ ...r, publish: null, e2e: null, ...answers[i] })));
      },
      // A run stored before histograms were kept, or a history that cannot say: no heatmap.
      () => live && setInputs([]),
    );
    return () => {
      live = false;
    };
  }, [key]);
  const specs = useMemo(() => (inputs ? heatmapCharts(inputs) : []), [inputs]);
  if (specs.length === 0) return null;
  return <ChartGrid specs={specs} downloadIds={runs.map((r) => r.id)} />;
}
