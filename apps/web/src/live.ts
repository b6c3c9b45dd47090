// Follows a run's server-sent events: samples as they come, progress, and the stored record at the end.
import { useEffect, useState } from 'react';
import { api, type Progress, type RunRecord, type Sample } from './api';

export interface LiveState {
  samples: Sample[];
  progress: Progress | null;
  /** Set once the run has ended and is stored. */
  record: RunRecord | null;
  connected: boolean;
}

export function useLiveRun(id: string): LiveState {
  const [state, setState] = useState<LiveState>({
    samples: [],
    progress: null,
    record: null,
    connected: false,
  });

  useEffect(() => {
    setState({ samples: [], progress: null, record: null, connected: false });
    const source = new EventSource(api.eventsUrl(id));
    // The server replays every sample on each (re)connection, so start the list afresh.
    source.addEventListener('open', () => setState((s) => ({ ...s, samples: [], connected: true })));
    source.addEventListener('error', () => {
      setState((s) => ({ ...s, connected: false }));
      // The browser gives up (no retry) when the server refuses the stream, e.g. after a restart
      // that lost the run: show what the history holds instead of waiting forever.
      if (source.readyState === EventSource.CLOSED) {
        api.run(id).then(
          (record) => setState((s) => ({ ...s, record })),
          () => {},
        );
      }
    });
    source.addEventListener('sample', (e) => {
      const sample = JSON.parse((e as MessageEvent<string>).data) as Sample;
      setState((s) => ({ ...s, samples: [...s.samples, sample] }));
    });
    source.addEventListener('progress', (e) => {
      const progress = JSON.parse((e as MessageEvent<string>).data) as Progress;
      setState((s) => ({ ...s, progress }));
    });
    source.addEventListener('end', (e) => {
      const record = JSON.parse((e as MessageEvent<string>).data) as RunRecord;
      source.close();
      setState((s) => ({ ...s, record, connected: false }));
    });
    return () => source.close();
  }, [id]);

  return state;
}
