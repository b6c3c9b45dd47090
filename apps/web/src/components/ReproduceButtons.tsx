// Reproduce (quick) and Reproduce for a write-up folder. A full reproduction can take hours (all of
// redpanda-2021 about an hour and a half), so it starts only once its estimate has been read and confirmed.
import { aboutDuration, type ReproductionEstimate, type ReproductionEstimates } from '@kbench/schema';
import { type ReactNode, useState } from 'react';

/** `13 runs, about 1 h 32 min` (plus the runs whose length is not known ahead). */
export function estimateText(e: ReproductionEstimate): string {
  const runs = `${e.runs} run${e.runs === 1 ? '' : 's'}`;
  if (e.unbounded === e.runs)
    return `${runs}, each bounded by a record count, so their length depends on throughput`;
  const bounded =
    e.unbounded > 0 ? `, plus ${e.unbounded} bounded by a record count (length not known ahead)` : '';
  return `${runs}, ${aboutDuration(e.seconds)}${bounded}`;
}

/** `children`: more actions, shown before the two buttons. */
export function ReproduceButtons({
  estimate,
  disabled,
  onReproduce,
  children,
}: {
  estimate: ReproductionEstimates | undefined;
  disabled: boolean;
  onReproduce: (quick: boolean) => void;
  children?: ReactNode;
}) {
  const [confirming, setConfirming] = useState(false);
  const quickTitle = `Every scenario of the folder, each shortened as kbench reproduce --quick does (at most 3 s, warm-up 1 s)${
    estimate ? `: ${estimateText(estimate.quick)}` : ''
  }`;
  return (
    <div className="reproduce-buttons">
      <div className="scenario-actions">
        {children}
        <button
          type="button"
          className="btn"
          disabled={disabled}
          onClick={() => onReproduce(true)}
          data-testid="reproduce-quick"
          title={quickTitle}
        >
          ▶ Reproduce (quick)
        </button>
        <button
          type="button"
          className="btn primary"
          disabled={disabled || confirming}
          onClick={() => setConfirming(true)}
          data-testid="reproduce"
          title="Every scenario of the folder that kbench can run here, at full length, one after another, with the direction checks"
        >
          ▶ Reproduce
        </button>
      </div>
      {confirming && (
        <div
          className="reproduce-confirm"
          role="dialog"
          aria-label="Start a full reproduction"
          data-testid="reproduce-confirm"
        >
          <p>
            A full reproduction runs every scenario at full length, one at a time:{' '}
            <strong>{estimate ? estimateText(estimate.full) : 'its length could not be estimated'}</strong>{' '}
            (warm-up and measured time, plus setup). No other run can start until it ends; Stop on its page
            ends it.
          </p>
          <div className="scenario-actions">
            <button
              type="button"
              className="btn primary"
              disabled={disabled}
              onClick={() => {
                setConfirming(false);
                onReproduce(false);
              }}
              data-testid="reproduce-confirm-start"
            >
              Start the full reproduction
            </button>
            <button
              type="button"
              className="btn"
              onClick={() => setConfirming(false)}
              data-testid="reproduce-cancel"
            >
              Cancel
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
