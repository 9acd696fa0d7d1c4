import type { BarSeriesOption, LineSeriesOption } from 'echarts/charts';
import type { GridComponentOption, LegendComponentOption } from 'echarts/components';
import type { ComposeOption } from 'echarts/core';
import { esc } from './pages.ts';

let loaded: Promise<typeof import('echarts/core')> | undefined;
/**
 * ECharts with only what the console draws (bars, lines, the grid, the legend, the SVG renderer),
 * loaded with the first chart: its import takes about a second, which the process's start need not pay.
 */
function echartsCore(): Promise<typeof import('echarts/core')> {
  loaded ??= (async () => {
    const [core, charts, components, renderers] = await Promise.all([
      import('echarts/core'),
      import('echarts/charts'),
      import('echarts/components'),
      import('echarts/renderers'),
    ]);
    core.use([
      charts.BarChart,
      charts.LineChart,
      components.GridComponent,
      components.LegendComponent,
      renderers.SVGRenderer,
    ]);
    return core;
  })();
  return loaded;
}

export type ChartOption = ComposeOption<
  BarSeriesOption | LineSeriesOption | GridComponentOption | LegendComponentOption
>;

/** Distinct on white at 5.8:1 or more (WCAG AA asks 4.5:1 for text, 3:1 for graphics). */
export const PALETTE = [
  '#1f5fa8',
  '#b3261e',
  '#1b6e35',
  '#8a4f00',
  '#6b3fa0',
  '#00707a',
  '#4a4a4a',
  '#a3007d',
];

/** SVG presentation attributes a renderer's `style="..."` may carry, kept as attributes. */
const PRESENTATION = new Set([
  'font-size',
  'font-family',
  'font-weight',
  'font-style',
  'fill',
  'stroke',
  'opacity',
]);

/**
 * `option` drawn by Apache ECharts on the server as SVG, made fit for the console's CSP
 * (`style-src 'self'`, no script): the hover `<style>` element is dropped (no pointer events reach a
 * script-free page), inline `style` attributes become presentation attributes, the namespaces go
 * (inline SVG in HTML needs none), the renderer's hover classes and metadata go, its per-instance ids
 * become `id`-prefixed (stable run to run), and the root gets `role="img"` and `aria-label`. Animation is off: the output is the
 * same for the same option.
 */
export async function chartSvg(
  id: string,
  label: string,
  option: ChartOption,
  size = { width: 720, height: 300 },
): Promise<string> {
  const echarts = await echartsCore();
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, ...size });
  try {
    chart.setOption({
      animation: false,
      color: PALETTE,
      textStyle: { fontFamily: 'system-ui, sans-serif', fontSize: 12, color: '#1a1a1a' },
      ...option,
    });
    return chart
      .renderToSVGString()
      .replace(/<style[^>]*>[\s\S]*?<\/style>/g, '')
      .replace(/ style="([^"]*)"/g, (_, style: string) =>
        style
          .split(';')
          .map((part) => part.split(':').map((s) => s.trim()))
          .filter(([name, value]) => name && value && PRESENTATION.has(name))
          .map(([name, value]) => ` ${name}="${esc(value!)}"`)
          .join(''),
      )
      .replace(/ (xmlns(:xlink)?|version|baseProfile|class|ecmeta_\w+)="[^"]*"/g, '')
      .replace(/zr\d+-/g, `${id}-`)
      .replace(/^<svg width="\d+" height="\d+"/, `<svg class="chart" role="img" aria-label="${esc(label)}"`);
  } finally {
    chart.dispose();
  }
}

/** Wide for a laptop, narrow for a phone: CSS shows one (`display: none` hides the other from assistive technology too). */
export type Layout = { narrow: boolean; width: number; height: number };

/**
 * The chart drawn twice, 720 px wide and 360 px wide, each from `option(layout)`: scaled down,
 * a laptop's chart would be unreadable on a phone.
 */
export async function responsiveChart(
  id: string,
  label: string,
  option: (layout: Layout) => ChartOption,
  height = 300,
): Promise<string> {
  const wide = { narrow: false, width: 720, height };
  const narrow = { narrow: true, width: 360, height: height + 60 };
  return `<div class="chart-wide">${await chartSvg(`${id}w`, label, option(wide), wide)}</div>
<div class="chart-narrow">${await chartSvg(`${id}n`, label, option(narrow), narrow)}</div>`;
}

/**
 * A chart as a figure: its caption, the SVG, and the same figures as a table in a `<details>`
 * ("The figures"), so that every value is readable without the picture.
 */
export function figure(input: { caption: string; svg: string; table: string }): string {
  return `<figure class="chart-figure"><figcaption>${esc(input.caption)}</figcaption>
<div class="chart-box">${input.svg}</div>
<details><summary>The figures</summary>${input.table}</details></figure>`;
}
