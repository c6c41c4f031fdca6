import { expect } from 'chai';
import { builtinCodecs, builtinMimeMap, codecForMime } from '../../src/codecs';
import { codec } from './support';

describe('codec mime map', () => {
  const map = builtinMimeMap(builtinCodecs);

  it('maps the builtin mime types as the original runtime does', () => {
    expect(map).to.deep.equal({
      'application/json': 'json',
      'application/yaml': 'yaml',
      'text/plain': 'string',
      'text/html': 'string',
      'application/msgpack': 'msgpack',
      'application/x-msgpack': 'msgpack',
      'application/vnd.msgpack': 'msgpack',
      'application/octet-stream': 'binary',
    });
  });

  it('looks up the essence of a Content-Type, falling back to the configured codec', () => {
    expect(codecForMime('application/json; charset=utf-8', map, 'string')).to.equal('json');
    expect(codecForMime(' Text/HTML ;q=1', map, 'json')).to.equal('string');
    expect(codecForMime('application/x-unknown', map, 'binary')).to.equal('binary');
    expect(codecForMime(undefined, map, 'json')).to.equal('json');
  });

  it('lets a codec_map add and override entries, whatever their case', () => {
    const codecMap = { ...map, 'Application/JSON': 'string', 'application/x-influx': 'influx' };
    delete (codecMap as Record<string, string>)['application/json'];
    expect(codecForMime('application/json', codecMap, 'binary')).to.equal('string');
    expect(codecForMime('application/x-influx', codecMap, 'binary')).to.equal('influx');
  });

  it('registers every codec of the issue under a unique name', () => {
    const names = builtinCodecs.map((c) => c.name);
    expect([...names].sort()).to.deep.equal([
      'avro',
      'binary',
      'binflux',
      'influx',
      'json',
      'msgpack',
      'null',
      'protobuf',
      'statsd',
      'string',
      'syslog',
      'yaml',
    ]);
    for (const type of builtinCodecs) expect(codec(type.name).name).to.equal(type.name);
  });
});
