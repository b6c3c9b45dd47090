import { describe, expect, it } from 'vitest';
import { runsToCsv, samplesToCsv } from '../src/index.js';
import { makeRun, makeSample, makeSummary } from './fixtures.js';

describe('samplesToCsv', () => {
  it('writes a snake_case header and one CRLF-terminated row per sample, nulls as empty fields', () => {
    const csv = samplesToCsv([makeSample(1)]);
    const [header, row, rest] = csv.split('\r\n');
    expect(header).toBe(
      't,interval_ms,warmup,produced_records,produced_bytes,consumed_records,consumed_bytes,errors,backlog,' +
        'publish_p50_ms,publish_p99_ms,publish_max_ms,e2e_p50_ms,e2e_p99_ms,e2e_max_ms',
    );
    expect(row).toBe('1,1000,true,1000,100000,900,90000,0,100,1.25,4.5,12,,,');
    expect(rest).toBe('');
  });

  it('writes only the header for no samples', () => {
    expect(samplesToCsv([]).split('\r\n')).toHaveLength(2);
  });
});

describe('runsToCsv', () => {
  it('quotes fields holding commas, quotes and line breaks', () => {
    const { scenario, environment, ...rest } = makeRun({
      notes: 'says "hi", then\nleaves',
      tags: ['a', 'b'],
      summary: makeSummary(),
    });
    const csv = runsToCsv([{ ...rest, name: 'x,y', target: 'bundled', driver: 'native' }]);
    const lines = csv.split('\r\n');
    expect(lines[0]?.startsWith('id,status,name,target,driver,source,started_at,finished_at')).toBe(true);
    expect(csv).toContain('run-0001,running,"x,y",bundled,native,');
    expect(csv).toContain(',a;b,"says ""hi"", then\nleaves",\r\n');
    expect(csv).toContain(',1000,0.095,');
  });

  it('names the runs a run went on at the same time as in concurrent_with, joined with ;', () => {
    const { scenario, environment, ...rest } = makeRun({ concurrentWith: ['aaaa1111', 'bbbb2222'] });
    const [header, row] = runsToCsv([{ ...rest, name: 'x', target: 'bundled', driver: 'native' }]).split(
      '\r\n',
    );
    expect(header).toMatch(/,notes,concurrent_with$/);
    expect(row).toMatch(/,aaaa1111;bbbb2222$/);
  });
});
