import { expect } from 'chai';
import { createLogger, maskingLogger, type Logger } from '../../src/core/logger';
import { maskUrlCredentials, maskUrlCredentialsDeep } from '../../src/core/redact';

describe('core/redact: credentials in URLs, masked in any text', () => {
  const cases: [string, string][] = [
    ['amqp://guest:guest@127.0.0.1:5672/%2f', 'amqp://guest:***@127.0.0.1:5672/%2f'],
    [
      "offramp 'search' (elastic) cannot start: no node answers GET /_cluster/health (http://elastic:s3cret@127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1)",
      "offramp 'search' (elastic) cannot start: no node answers GET /_cluster/health (http://elastic:***@127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1)",
    ],
    // a userinfo without a password is a token (nats, git hosts): masked whole
    ['nats://s3cret@127.0.0.1:4222', 'nats://***@127.0.0.1:4222'],
    // an unencoded @ in the password: the userinfo runs to the last @ of the authority, as URL parsers read it
    ['http://u:p@ss@w0rd@host:1/x?y=a@b', 'http://u:***@host:1/x?y=a@b'],
    // two URLs, each masked; an address after the path is not a userinfo
    ['from https://a:one@h1/ to wss://b:two@h2 (mail root@h3)', 'from https://a:***@h1/ to wss://b:***@h2 (mail root@h3)'],
    // quoted, as JSON.stringify shows a value
    ['nodes[0]: not a URL: "http://u:s3cret@ho st"', 'nodes[0]: not a URL: "http://u:***@ho st"'],
    // no URL, no credentials, already masked: unchanged
    ['connect ECONNREFUSED 127.0.0.1:1', 'connect ECONNREFUSED 127.0.0.1:1'],
    ['http://127.0.0.1:9200/_bulk', 'http://127.0.0.1:9200/_bulk'],
    ['amqp://guest:***@127.0.0.1', 'amqp://guest:***@127.0.0.1'],
    ['user@example.com', 'user@example.com'],
  ];
  for (const [text, masked] of cases) {
    it(`${text} → ${masked}`, () => {
      expect(maskUrlCredentials(text)).to.equal(masked);
    });
  }

  it('masks every string of a value, in a copy', () => {
    const value = { nodes: ['http://u:s3cret@h'], nested: { why: 'at nats://t0ken@h' }, n: 1, ok: true };
    const before = structuredClone(value);
    expect(maskUrlCredentialsDeep(value)).to.deep.equal({ nodes: ['http://u:***@h'], nested: { why: 'at nats://***@h' }, n: 1, ok: true });
    expect(value).to.deep.equal(before);
  });

  describe('the loggers', () => {
    it("eddy's own logger masks every line it writes", () => {
      const written: string[] = [];
      const logger = createLogger('debug', { format: 'text', write: (line) => void written.push(line), now: () => new Date(0) });
      logger.warn('lost http://elastic:s3cret@127.0.0.1:9200', { url: 'amqp://g:s3cret@h' });
      expect(written).to.deep.equal(['1970-01-01T00:00:00.000Z WARN  lost http://elastic:***@127.0.0.1:9200 {"url":"amqp://g:***@h"}\n']);
    });

    it("an application's own logger, given to the runtime, gets the lines masked too", () => {
      const lines: [string, unknown][] = [];
      const own: Logger = {
        debug: (m, f) => lines.push([m, f]),
        info: (m, f) => lines.push([m, f]),
        warn: (m, f) => lines.push([m, f]),
        error: (m, f) => lines.push([m, f]),
      };
      const logger = maskingLogger(own);
      logger.error('cannot post to https://u:s3cret@h/', { nodes: ['nats://t0ken@h'] });
      logger.info('plain');
      expect(lines).to.deep.equal([
        ['cannot post to https://u:***@h/', { nodes: ['nats://***@h'] }],
        ['plain', undefined],
      ]);
    });
  });
});
