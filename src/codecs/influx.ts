import type { CodecType } from './codec';
import { formatLine } from './influx/line-encode';
import { parseLine } from './influx/line-decode';
import { toPoint } from './influx/point';

/**
 * influx: InfluxDB line protocol, one line per frame (pair it with the `lines`
 * preprocessor). A blank or comment line decodes to `undefined` (no event); a
 * line without a timestamp takes the frame's ingest time. See influx/point.ts
 * for how field types map to JavaScript types.
 */
export const influx: CodecType = {
  name: 'influx',
  summary: 'InfluxDB line protocol: one point per frame, `{measurement, tags, fields, timestamp}`.',
  create: () => ({
    name: 'influx',
    decode(data, ingestNs) {
      const point = parseLine(data.toString('utf8'));
      if (point && point.timestamp === undefined) point.timestamp = ingestNs;
      return point;
    },
    encode(value) {
      return Buffer.from(formatLine(toPoint(value, 'influx')), 'utf8');
    },
  }),
};
