import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConsumerPerformance, parseProducerPerformance } from '../src/parse.js';

// Captured from the real Kafka 4.3.1 tools (test/fixtures), so a format change upstream shows up here.
const fixture = (name: string) => readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8');

describe('parseProducerPerformance', () => {
  it('reads the final summary line and skips the progress lines before it', () => {
    expect(parseProducerPerformance(fixture('producer-performance.out'))).toEqual({
      records: 2_000_000,
      recordsPerSec: 332281.109819,
      mbPerSec: 31.69,
      avgLatencyMs: 560.55,
      maxLatencyMs: 842,
      p50Ms: 548,
      p95Ms: 791,
      p99Ms: 827,
      p999Ms: 838,
    });
  });

  it('reads the steady-state line of --warmup-records beside the summary of every record', () => {
    const summary = parseProducerPerformance(fixture('producer-performance-warmup.out'));
    expect(summary).toMatchObject({ records: 20_000, p99Ms: 30, maxLatencyMs: 282 });
    expect(summary?.steadyState).toEqual({
      records: 15_000,
      recordsPerSec: 4963.600265,
      mbPerSec: 0.47,
      avgLatencyMs: 3.63,
      maxLatencyMs: 9,
      p50Ms: 4,
      p95Ms: 6,
      p99Ms: 7,
      p999Ms: 7,
    });
  });

  it('returns undefined when the run died before its summary (progress lines only)', () => {
    const progressOnly = fixture('producer-performance.out').split('\n')[0]!;
    expect(parseProducerPerformance(progressOnly)).toBeUndefined();
  });

  it('returns undefined for a stack trace', () => {
    const failed =
      'org.apache.kafka.common.KafkaException: Failed to construct kafka producer\n\tat org.apache.kafka.tools.ProducerPerformance.main(ProducerPerformance.java:58)';
    expect(parseProducerPerformance(failed)).toBeUndefined();
  });
});

describe('parseConsumerPerformance', () => {
  it('maps the header names to the values of the result line, ignoring a warning before them', () => {
    expect(parseConsumerPerformance(fixture('consumer-performance.out'))).toEqual({
      startTime: '2026-11-21 13:40:56:270',
      endTime: '2026-11-21 13:40:58:357',
      mb: 28.6102,
      mbPerSec: 13.7088,
      messages: 300_000,
      messagesPerSec: 143747.0053,
      rebalanceTimeMs: 1255,
      fetchTimeMs: 832,
      fetchMbPerSec: 34.3873,
      fetchMessagesPerSec: 360576.9231,
    });
  });

  it('returns undefined when the result line is missing', () => {
    const headerOnly = fixture('consumer-performance.out').split('\n').slice(0, 2).join('\n');
    expect(parseConsumerPerformance(headerOnly)).toBeUndefined();
  });
});
