import { describe, expect, it } from 'vitest';
import { throughputChart } from '../src/index.js';
import { renderPng } from '../src/png.js';
import { samples } from './fixtures.js';

describe('renderPng', () => {
  it('rasterises the chart to a PNG at twice its width', () => {
    const png = renderPng(throughputChart([{ label: 'run', samples: samples(3) }]).option);
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(png.readUInt32BE(16)).toBe(1920);
  });
});
