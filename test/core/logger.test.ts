import { expect } from 'chai';
import { childLogger, createLogger, parseLogLevels, type Logger } from '../../src/core/logger';

/** A logger writing into an array, at a fixed time. */
function recording(spec: string, format: 'text' | 'json' = 'text'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return {
    logger: createLogger(spec, { format, write: (line) => void lines.push(line.trimEnd()), now: () => new Date(Date.UTC(2026, 11, 6, 22, 40)) }),
    lines,
  };
}

describe('core/logger: timestamps, levels per module, JSON lines, child loggers', () => {
  it("writes a timestamp, the level, the child logger's module and instance, the message and the fields", () => {
    const { logger, lines } = recording('info');
    logger.child!({ module: 'kafka', instance: '/onramp/in/main' }).warn('rebalanced', { partitions: 4 });
    logger.info('plain');
    expect(lines).to.deep.equal(['2026-12-06T22:40:00.000Z WARN  [kafka /onramp/in/main] rebalanced {"partitions":4}', '2026-12-06T22:40:00.000Z INFO  plain']);
  });

  it('EDDY_LOG=kafka=debug,warn: the kafka module at debug, everyone else at warn', () => {
    const { logger, lines } = recording('kafka=debug,warn');
    const kafka = logger.child!({ module: 'kafka' });
    const tcp = logger.child!({ module: 'tcp' });
    kafka.debug('fetch');
    tcp.info('accepted');
    tcp.warn('reset');
    logger.info('runtime started');
    expect(lines.map((l) => l.slice(25))).to.deep.equal(['DEBUG [kafka] fetch', 'WARN  [tcp] reset']);
  });

  it('--log-format json: one object per line, the bindings and fields beside time, level and msg', () => {
    const { logger, lines } = recording('info', 'json');
    logger.child!({ worker: 2 }).child!({ module: 'file', instance: '/offramp/out/main' }).error('write failed', { code: 'ENOSPC' });
    expect(lines.map((l) => JSON.parse(l) as unknown)).to.deep.equal([
      { time: '2026-12-06T22:40:00.000Z', level: 'error', worker: 2, module: 'file', instance: '/offramp/out/main', msg: 'write failed', code: 'ENOSPC' },
    ]);
  });

  it('a worker in the text label', () => {
    const { logger, lines } = recording('info');
    logger.child!({ worker: 1 }).child!({ module: 'tcp', instance: '/onramp/in/main' }).info('listening');
    expect(lines[0].slice(25)).to.equal('INFO  [worker 1 tcp /onramp/in/main] listening');
  });

  it("an application's logger without child gets the bindings as fields", () => {
    const seen: [string, unknown][] = [];
    const own: Logger = { debug: () => undefined, info: (m, f) => void seen.push([m, f]), warn: () => undefined, error: () => undefined };
    childLogger(own, { module: 'kafka' }).info('hello', { n: 1 });
    expect(seen).to.deep.equal([['hello', { module: 'kafka', n: 1 }]]);
  });

  it('refuses an EDDY_LOG it cannot read, naming the part', () => {
    expect(() => parseLogLevels('kafka=verbose,warn')).to.throw("EDDY_LOG: unknown level 'verbose' in 'kafka=verbose,warn'");
    expect(() => parseLogLevels('=debug')).to.throw("EDDY_LOG: '=debug' names no module");
    expect(parseLogLevels('silent').base).to.be.above(parseLogLevels('error').base);
  });

  it('spreads like an object literal: `{ ...logger, warn }` keeps every level, and its children call its own warn', () => {
    const { logger, lines } = recording('debug');
    const mine: string[] = [];
    const spread: Logger = { ...logger, warn: (m) => void mine.push(m) };
    spread.debug('d');
    childLogger(spread, { module: 'm' }).warn('w');
    childLogger(spread, { module: 'm' }).info('i');
    expect(mine).to.deep.equal(['w']);
    expect(lines.map((l) => l.slice(25))).to.deep.equal(['DEBUG d', 'INFO  i {"module":"m"}']);
  });
});
