// Every chart of one run, as @kbench/charts draws them.
import { type ChartSpec, type FaultMark, runCharts } from '@kbench/charts';
import type { Sample } from '@kbench/schema';
import { useMemo } from 'react';
import { api } from '../api';
import { EChart, type EChartsOption } from './EChart';

/**
 * Every chart of one run, each naming the run (its label and `id`); with `downloadId` (a stored
 * run), each offers its SVG and PNG too.
 */
export function RunCharts({
  samples,
  label,
  id,
  downloadId,
  faults,
}: {
  samples: Sample[];
  label?: string;
  /** The run's id, shown under each chart's title (defaults to `downloadId`). */
  id?: string;
  downloadId?: string;
  /** The run's fault timeline, marked on the time charts. */
  faults?: FaultMark[];
}) {
  const named = id ?? downloadId;
  const specs = useMemo(() => runCharts(samples, label, faults, named), [samples, label, faults, named]);
  return <ChartGrid specs={specs} downloadIds={downloadId ? [downloadId] : undefined} />;
}

/** Charts in a grid, each with download links when the runs are stored. */
export function ChartGrid({
  specs,
  downloadIds,
}: {
  specs: ChartSpec[];
  downloadIds?: string[] | undefined;
}) {
  return (
    <div className="chart-grid" data-testid="charts">
      {specs.map((spec) => (
        // The option carries its own title, so the panel adds none.
        <section
          key={spec.id}
          className="panel chart-panel"
          aria-label={spec.title}
          data-testid={`chart-${spec.id}`}
        >
          <EChart option={spec.option as EChartsOption} height={320} />
          {downloadIds && (
            <div className="chart-downloads">
              {(['svg', 'png'] as const).map((format) => (
                <a
                  key={format}
                  href={api.chartUrl(spec.id, format, downloadIds)}
                  download
                  data-testid={`download-${spec.id}-${format}`}
                >
                  {format.toUpperCase()}
                </a>
              ))}
            </div>
          )}
        </section>
      ))}
    </div>
  );
}
