/**
 * The aggregate functions of window::aggregate: `count()`, `sum(event.x)`,
 * `percentile(event.ms, 0.99)`, … The operator parses a call into a name and
 * its arguments, evaluates the per-event arguments on every event and the
 * constant ones once at publish, and keeps one accumulator per group and window.
 * Each function, its result and its error bound: docs/aggregate-functions.md.
 */
import { count, countIf, first, last } from './basic';
import { collect } from './collect';
import { distinct } from './distinct';
import { max, mean, min, stddev, sum, variance } from './numeric';
import { percentile } from './percentile';
import type { AggregateFunction } from './function';

export type { Accumulator, AggregateFunction } from './function';

const ALL: readonly AggregateFunction[] = [count, countIf, sum, min, max, mean, variance, stddev, percentile, distinct, first, last, collect];

export const AGGREGATE_FUNCTIONS: ReadonlyMap<string, AggregateFunction> = new Map(ALL.map((f) => [f.name, f]));
