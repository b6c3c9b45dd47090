// The scenario library as the server lists it and the web app shows it.
import type { ScenarioIssue } from './errors.js';
import type { MessageSize } from './message-size.js';

/** The knobs a person scans a list for, from the resolved scenario. */
export interface ScenarioOutline {
  target: string;
  driver: string;
  nodes: number;
  partitions: number;
  producers: number;
  consumers: number;
  messageSize: MessageSize;
  /** How long it runs: a duration ("60s") or a record count. */
  length: string;
  sweep: boolean;
}

/** One scenario file of the library (user/ paths are the person's own). */
export interface ScenarioEntry {
  path: string;
  folder: string;
  name: string;
  description: string;
  valid: boolean;
  issues?: ScenarioIssue[];
  outline?: ScenarioOutline;
}
