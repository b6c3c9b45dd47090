import { History } from '@kbench/history';

/** The history under KBENCH_HOME, shared with the server and other CLI processes. */
export function openHistory(): Promise<History> {
  return History.open();
}
