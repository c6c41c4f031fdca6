/**
 * A line plot rasterised by hand into an RGB buffer and written with the
 * encoder in png.ts: axes with "nice" ticks (1, 2 or 5 times a power of
 * ten), a polyline of the samples, optional dashed vertical markers, and
 * labels in a 5x7 bitmap font (upper case, digits and a few signs).
 */
import { encodePng } from './png';

export type Colour = readonly [number, number, number];

const WHITE: Colour = [255, 255, 255];
const BLACK: Colour = [0, 0, 0];
const GRID: Colour = [225, 225, 225];
const LINE: Colour = [31, 100, 200];
const MARK: Colour = [215, 60, 50];

/** 5x7 glyphs, row by row from the top; `#` is ink. Lower case is drawn as upper case. */
const GLYPHS: Record<string, string> = {
  A: '.###. #...# #...# ##### #...# #...# #...#',
  B: '####. #...# #...# ####. #...# #...# ####.',
  C: '.###. #...# #.... #.... #.... #...# .###.',
  D: '####. #...# #...# #...# #...# #...# ####.',
  E: '##### #.... #.... ####. #.... #.... #####',
  F: '##### #.... #.... ####. #.... #.... #....',
  G: '.###. #...# #.... #.### #...# #...# .####',
  H: '#...# #...# #...# ##### #...# #...# #...#',
  I: '.###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.',
  J: '..### ...#. ...#. ...#. ...#. #..#. .##..',
  K: '#...# #..#. #.#.. ##... #.#.. #..#. #...#',
  L: '#.... #.... #.... #.... #.... #.... #####',
  M: '#...# ##.## #.#.# #.#.# #...# #...# #...#',
  N: '#...# #...# ##..# #.#.# #..## #...# #...#',
  O: '.###. #...# #...# #...# #...# #...# .###.',
  P: '####. #...# #...# ####. #.... #.... #....',
  Q: '.###. #...# #...# #...# #.#.# #..#. .##.#',
  R: '####. #...# #...# ####. #.#.. #..#. #...#',
  S: '.#### #.... #.... .###. ....# ....# ####.',
  T: '##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..',
  U: '#...# #...# #...# #...# #...# #...# .###.',
  V: '#...# #...# #...# #...# #...# .#.#. ..#..',
  W: '#...# #...# #...# #.#.# #.#.# #.#.# .#.#.',
  X: '#...# #...# .#.#. ..#.. .#.#. #...# #...#',
  Y: '#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..',
  Z: '##### ....# ...#. ..#.. .#... #.... #####',
  '0': '.###. #...# #..## #.#.# ##..# #...# .###.',
  '1': '..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.',
  '2': '.###. #...# ....# ...#. ..#.. .#... #####',
  '3': '##### ...#. ..#.. ...#. ....# #...# .###.',
  '4': '...#. ..##. .#.#. #..#. ##### ...#. ...#.',
  '5': '##### #.... ####. ....# ....# #...# .###.',
  '6': '..##. .#... #.... ####. #...# #...# .###.',
  '7': '##### ....# ...#. ..#.. .#... .#... .#...',
  '8': '.###. #...# #...# .###. #...# #...# .###.',
  '9': '.###. #...# #...# .#### ....# ...#. .##..',
  ' ': '..... ..... ..... ..... ..... ..... .....',
  '.': '..... ..... ..... ..... ..... .##.. .##..',
  ',': '..... ..... ..... ..... .##.. ..#.. .#...',
  '-': '..... ..... ..... ##### ..... ..... .....',
  ':': '..... .##.. .##.. ..... .##.. .##.. .....',
  '/': '..... ....# ...#. ..#.. .#... #.... .....',
  '(': '...#. ..#.. .#... .#... .#... ..#.. ...#.',
  ')': '.#... ..#.. ...#. ...#. ...#. ..#.. .#...',
  '=': '..... ..... ##### ..... ##### ..... .....',
  '%': '##... ##..# ...#. ..#.. .#... #..## ...##',
  '+': '..... ..#.. ..#.. ##### ..#.. ..#.. .....',
  '?': '.###. #...# ....# ...#. ..#.. ..... ..#..',
};

/** An RGB raster with the few drawing operations a plot needs. */
export class Canvas {
  readonly pixels: Uint8Array;

  constructor(
    readonly width: number,
    readonly height: number,
    background: Colour = WHITE,
  ) {
    this.pixels = new Uint8Array(width * height * 3);
    for (let i = 0; i < width * height; i++) this.pixels.set(background, i * 3);
  }

  set(x: number, y: number, c: Colour): void {
    x = Math.round(x);
    y = Math.round(y);
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return;
    this.pixels.set(c, (y * this.width + x) * 3);
  }

  get(x: number, y: number): Colour {
    const i = (y * this.width + x) * 3;
    return [this.pixels[i], this.pixels[i + 1], this.pixels[i + 2]];
  }

  fillRect(x: number, y: number, w: number, h: number, c: Colour): void {
    for (let j = 0; j < h; j++) for (let i = 0; i < w; i++) this.set(x + i, y + j, c);
  }

  /** A straight line (Bresenham), `thickness` pixels wide; `dash` draws that many pixels, then skips as many. */
  line(x0: number, y0: number, x1: number, y1: number, c: Colour, thickness = 1, dash = 0): void {
    x0 = Math.round(x0);
    y0 = Math.round(y0);
    x1 = Math.round(x1);
    y1 = Math.round(y1);
    const dx = Math.abs(x1 - x0);
    const dy = -Math.abs(y1 - y0);
    const sx = x0 < x1 ? 1 : -1;
    const sy = y0 < y1 ? 1 : -1;
    let err = dx + dy;
    const half = Math.floor((thickness - 1) / 2);
    for (let step = 0; ; step++) {
      if (dash === 0 || Math.floor(step / dash) % 2 === 0) this.fillRect(x0 - half, y0 - half, thickness, thickness, c);
      if (x0 === x1 && y0 === y1) break;
      const e2 = 2 * err;
      if (e2 >= dy) {
        err += dy;
        x0 += sx;
      }
      if (e2 <= dx) {
        err += dx;
        y0 += sy;
      }
    }
  }

  /** Text in the 5x7 font, each glyph `scale` times larger, 1 glyph column of space between letters; returns the width drawn. */
  text(x: number, y: number, s: string, c: Colour = BLACK, scale = 2): number {
    let cx = x;
    for (const ch of s.toUpperCase()) {
      const rows = (GLYPHS[ch] ?? GLYPHS['?']).split(' ');
      rows.forEach((row, ry) => {
        for (let rx = 0; rx < 5; rx++) if (row[rx] === '#') this.fillRect(cx + rx * scale, y + ry * scale, scale, scale, c);
      });
      cx += 6 * scale;
    }
    return cx - x;
  }

  png(): Buffer {
    return encodePng(this.width, this.height, this.pixels);
  }
}

/** The width `text` draws. */
// eslint-disable-next-line @typescript-eslint/no-misused-spread -- one glyph per code point, as `text` draws them (for...of)
export const textWidth = (s: string, scale = 2): number => [...s].length * 6 * scale;

/** A tick step of 1, 2 or 5 times a power of ten giving about `target` ticks over `range`. */
export function niceStep(range: number, target = 6): number {
  if (!(range > 0)) return 1;
  const raw = range / target;
  const power = 10 ** Math.floor(Math.log10(raw));
  const f = raw / power;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power;
}

/** Tick label without floating-point noise. */
function tickLabel(v: number, step: number): string {
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  return v.toFixed(decimals);
}

export interface LinePlot {
  title: string;
  xLabel: string;
  yLabel: string;
  /** [x, y] in data units, x ascending */
  points: [number, number][];
  /** x positions of dashed vertical markers */
  markers?: number[];
  markerLabel?: string;
  width?: number;
  height?: number;
  /** the y axis starts at 0 (default) rather than near the smallest value */
  yFromZero?: boolean;
}

/** Draws the plot and returns it as a PNG file. */
export function linePlotPng(plot: LinePlot): Buffer {
  const width = plot.width ?? 900;
  const height = plot.height ?? 440;
  const canvas = new Canvas(width, height);
  const left = 80;
  const right = 24;
  const top = 64;
  const bottom = 60;
  const plotW = width - left - right;
  const plotH = height - top - bottom;

  const xs = plot.points.map((p) => p[0]);
  const ys = plot.points.map((p) => p[1]);
  const xMax = Math.max(1e-9, ...xs, ...(plot.markers ?? []));
  const xStep = niceStep(xMax);
  const xTop = Math.ceil(xMax / xStep) * xStep;
  const yMaxData = ys.length ? Math.max(...ys) : 1;
  const yMinData = ys.length ? Math.min(...ys) : 0;
  const yLow = plot.yFromZero === false ? yMinData - (yMaxData - yMinData) * 0.1 : 0;
  const yStep = niceStep(Math.max(yMaxData - yLow, 1e-9) * 1.1, 6);
  const yBottom = Math.floor(yLow / yStep) * yStep;
  const yTop = Math.max(yBottom + yStep, Math.ceil((yMaxData * 1.05) / yStep) * yStep);

  const px = (x: number) => left + (x / xTop) * plotW;
  const py = (y: number) => top + plotH - ((y - yBottom) / (yTop - yBottom)) * plotH;

  // grid and tick labels
  for (let y = yBottom; y <= yTop + yStep / 2; y += yStep) {
    canvas.line(left, py(y), left + plotW, py(y), GRID);
    const label = tickLabel(y, yStep);
    canvas.text(left - 8 - textWidth(label), py(y) - 7, label);
  }
  for (let x = 0; x <= xTop + xStep / 2; x += xStep) {
    canvas.line(px(x), top, px(x), top + plotH, GRID);
    const label = tickLabel(x, xStep);
    canvas.text(px(x) - textWidth(label) / 2, top + plotH + 8, label);
  }
  // axes
  canvas.line(left, top, left, top + plotH, BLACK, 2);
  canvas.line(left, top + plotH, left + plotW, top + plotH, BLACK, 2);

  for (const m of plot.markers ?? []) canvas.line(px(m), top, px(m), top + plotH, MARK, 1, 4);
  for (let i = 1; i < plot.points.length; i++) {
    const [x0, y0] = plot.points[i - 1];
    const [x1, y1] = plot.points[i];
    canvas.line(px(x0), py(y0), px(x1), py(y1), LINE, 2);
  }
  if (plot.points.length === 1) canvas.fillRect(px(plot.points[0][0]) - 2, py(plot.points[0][1]) - 2, 5, 5, LINE);

  // labels
  // the title in the large font when it fits, else in the small one
  canvas.text(left, 12, plot.title, BLACK, textWidth(plot.title) <= width - left - 8 ? 2 : 1);
  canvas.text(8, top - 30, plot.yLabel);
  canvas.text(left + plotW / 2 - textWidth(plot.xLabel) / 2, height - 24, plot.xLabel);
  if (plot.markers?.length && plot.markerLabel) {
    const w = textWidth(plot.markerLabel);
    canvas.line(left + plotW - w - 34, top - 23, left + plotW - w - 10, top - 23, MARK, 1, 4);
    canvas.text(left + plotW - w, top - 30, plot.markerLabel, MARK);
  }
  return canvas.png();
}
