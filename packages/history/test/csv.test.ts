import { describe, expect, it } from 'vitest';
import { runsToCsv, samplesToCsv } from '../src/index.js';
import { makeRun, makeSample, makeSummary } from './fixtures.js';

describe('samplesToCsv', () => {
  it('writes a snake_case header and one CRLF-terminated row per sample, nulls as empty fields', () => {
    const csv = samplesToCsv([makeSample(1)]);
    const [header, row, rest] = csv.split('\r\n');
    expect(header).toBe(
      't,interval_ms,warmup,produced_records,produced_bytes,consumed_records,consumed_bytes,errors,backlog,' +
        'publish_p50_ms,publish_p99_ms,publish_max_ms,e2e_p50_ms,e2e_p99_ms,e2e_max_ms,' +
        'machine_cpu_busy,machine_others_busy,disk_written_bytes',
    );
    expect(row).toBe('1,1000,true,1000,100000,900,90000,0,100,1.25,4.5,12,,,,,,');
    expect(rest).toBe('');
  });

  it("writes the machine's CPU and the data disk's writes, the disk empty where there is none", () => {
    const [, onDisk, noDisk] = samplesToCsv([
      { ...makeSample(1), machineCpuBusy: 0.875, machineOthersBusy: 0.02, diskWrittenBytes: 262144000 },
      { ...makeSample(2), machineCpuBusy: 0.5, machineOthersBusy: null, diskWrittenBytes: null },
    ]).split('\r\n');
    expect(onDisk).toMatch(/,0\.875,0\.02,262144000$/);
    expect(noDisk).toMatch(/,0\.5,,$/);
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
    expect(csv).toContain(',a;b,"says ""hi"", then\nleaves",,,\r\n');
    expect(csv).toContain(',1000,0.095,');
  });

  it('writes the record check (verify_*) of a run that had one, empty for one without', () => {
    const totals = {
      acknowledged: 9120,
      found: 7280,
      lost: 1840,
      duplicated: 0,
      reordered: 0,
      unacknowledgedPresent: 3,
      foreign: 0,
    };
    const verification = {
      verdict: 'allowed' as const,
      statement: '1,840 lost, allowed by acks=1 (of 9,120 acknowledged)',
      allows: { lost: 'acks=1', duplicated: null, reordered: null },
      totals,
      partitions: [{ topic: 't', partition: 0, ...totals }],
    };
    const checked = makeRun({ summary: { ...makeSummary(), verification } });
    const unchecked = makeRun({ summary: makeSummary() });
    const [header, row, plain] = runsToCsv(
      [checked, unchecked].map(({ scenario, environment, ...rest }) => ({
        ...rest,
        name: 'x',
        target: 'bundled',
        driver: 'native',
      })),
    ).split('\r\n');
    const at = (line: string | undefined, column: string) =>
      line?.split(',')[header?.split(',').indexOf(column) ?? -1];
    expect(header).toContain(
      ',e2e_max_ms,verify_verdict,verify_acknowledged,verify_lost,verify_duplicated,verify_reordered,error,',
    );
    expect(
      ['verify_verdict', 'verify_acknowledged', 'verify_lost', 'verify_duplicated', 'verify_reordered'].map(
        (c) => at(row, c),
      ),
    ).toEqual(['allowed', '9120', '1840', '0', '0']);
    expect(at(plain, 'verify_verdict')).toBe('');
  });

  it('names the runs a run went on at the same time as in concurrent_with, joined with ;', () => {
    const { scenario, environment, ...rest } = makeRun({ concurrentWith: ['aaaa1111', 'bbbb2222'] });
    const [header, row] = runsToCsv([{ ...rest, name: 'x', target: 'bundled', driver: 'native' }]).split(
      '\r\n',
    );
    expect(header).toMatch(/,notes,concurrent_with,machine_cpu_busy,disk_written_bytes$/);
    expect(row).toMatch(/,aaaa1111;bbbb2222,,$/);
  });

  it("writes the machine's CPU and the data disk's writes over the measured phase", () => {
    const machine = { cpuBusy: 0.88, cores: 2, disk: 'vda', diskWrittenBytes: 5_000_000 };
    const { scenario, environment, ...rest } = makeRun({ summary: { ...makeSummary(), machine } });
    const [, row] = runsToCsv([{ ...rest, name: 'x', target: 'bundled', driver: 'native' }]).split('\r\n');
    expect(row).toMatch(/,0\.88,5000000$/);
  });
});
