// Every chart of one run, as @kbench/charts draws them.
import { runCharts } from '@kbench/charts';
import type { Sample } from '@kbench/schema';
import { useMemo } from 'react';
import { EChart, type EChartsOption } from './EChart';

export function RunCharts({ samples, label }: { samples: Sample[]; label?: string }) {
  const specs = useMemo(() => runCharts(samples, label), [samples, label]);
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
        </section>
      ))}
    </div>
  );
}
