import { cleanup, render } from '@testing-library/react';
import * as echarts from 'echarts/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EChart, type EChartsOption, sameOption } from '../src/components/EChart';

const option: EChartsOption = {
  animation: false,
  xAxis: { type: 'value', name: 's' },
  yAxis: { type: 'value', name: 'rec/s' },
  series: [
    {
      type: 'line',
      name: 'produced',
      data: [
        [1, 10],
        [2, 20],
        [3, 15],
      ],
    },
  ],
};

afterEach(cleanup);

describe('EChart', () => {
  it('renders the option as an svg with a path for the line series', () => {
    const { getByTestId } = render(
      <EChart option={option} height={200} style={{ width: 400 }} data-testid="chart" />,
    );
    const svg = getByTestId('chart').querySelector('svg');
    expect(svg).not.toBeNull();
    expect(svg!.querySelectorAll('path').length).toBeGreaterThan(0);
  });

  it('disposes its ECharts instance on unmount', () => {
    const { getByTestId, unmount } = render(<EChart option={option} data-testid="chart" />);
    const el = getByTestId('chart');
    expect(echarts.getInstanceByDom(el)).toBeDefined();
    unmount();
    expect(echarts.getInstanceByDom(el)).toBeUndefined();
  });

  it('keeps its instance across re-renders with the same theme', () => {
    const { getByTestId, rerender } = render(<EChart option={option} data-testid="chart" />);
    const first = echarts.getInstanceByDom(getByTestId('chart'));
    rerender(<EChart option={{ ...option, yAxis: { type: 'value', name: 'MB/s' } }} data-testid="chart" />);
    expect(echarts.getInstanceByDom(getByTestId('chart'))).toBe(first);
    expect(getByTestId('chart').textContent).toContain('MB/s');
  });

  it('skips setOption for an equal option and applies a changed one', () => {
    const { getByTestId, rerender } = render(<EChart option={option} data-testid="chart" />);
    const instance = echarts.getInstanceByDom(getByTestId('chart'))!;
    const setOption = vi.spyOn(instance, 'setOption');
    rerender(<EChart option={structuredClone(option)} data-testid="chart" />);
    expect(setOption).not.toHaveBeenCalled();
    const changed = { ...option, series: [{ type: 'line', name: 'produced', data: [[1, 11]] }] };
    rerender(<EChart option={changed} data-testid="chart" />);
    expect(setOption).toHaveBeenCalledTimes(1);
  });

  it('hands a click on the chart to onClick, the latest handler only', () => {
    const first = vi.fn();
    const second = vi.fn();
    const { getByTestId, rerender } = render(<EChart option={option} onClick={first} data-testid="chart" />);
    const instance = echarts.getInstanceByDom(getByTestId('chart'))!;
    // What ECharts hands its click handlers for a point of the first series (the fields a page reads).
    const click = (name: string) => instance.trigger('click', { seriesIndex: 0, name } as never);
    click('run-1');
    expect(first).toHaveBeenCalledWith(expect.objectContaining({ seriesIndex: 0, name: 'run-1' }));
    rerender(<EChart option={option} onClick={second} data-testid="chart" />);
    click('run-2');
    expect(first).toHaveBeenCalledTimes(1);
    expect(second).toHaveBeenCalledWith(expect.objectContaining({ name: 'run-2' }));
  });

  it('starts a new instance when the theme changes', () => {
    const { getByTestId, rerender } = render(<EChart option={option} data-testid="chart" />);
    const first = echarts.getInstanceByDom(getByTestId('chart'));
    rerender(<EChart option={option} theme="dark" data-testid="chart" />);
    const second = echarts.getInstanceByDom(getByTestId('chart'));
    expect(second).not.toBe(first);
    expect(first?.isDisposed()).toBe(true);
    expect(getByTestId('chart').querySelector('svg')).not.toBeNull();
  });
});

describe('sameOption', () => {
  it('treats structurally equal options as the same', () => {
    expect(sameOption(option, structuredClone(option))).toBe(true);
  });

  it('sees a changed data point', () => {
    const changed = structuredClone(option) as { series: { data: number[][] }[] };
    changed.series[0]!.data[1]![1] = 21;
    expect(sameOption(option, changed)).toBe(false);
  });
});
