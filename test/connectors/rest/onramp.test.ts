import { expect } from 'chai';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { eventually } from '../../helpers/runtime';
import { curl, startRestFlow, type RestFlow } from './helpers';

describe('rest onramp (unlinked)', () => {
  let flow: RestFlow | undefined;
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
  });

  it('decodes each body with the codec its Content-Type picks: json, yaml, text/plain, codec_map, else the ramp codec', async () => {
    flow = await startRestFlow({ onramp: { codec_map: { 'application/x-custom': 'yaml', 'text/html': 'json' } } });
    const post = (type: string | undefined, body: string) =>
      curl(flow!.base, ['-X', 'POST', '-H', `Content-Type:${type === undefined ? '' : ` ${type}`}`, '--data-binary', body]);
    const answers = [
      await post('application/json', '{"a":1}'),
      await post('application/yaml; charset=utf-8', 'b: 2'),
      await post('text/plain', 'hello'),
      await post('application/x-custom', 'c: 3'),
      await post('text/html', '{"html":"as json"}'), // codec_map overrides the builtin text/html -> string
      await post(undefined, '{"d":4}'), // no Content-Type: the ramp's codec (json)
      await post('application/x-unknown', '{"e":5}'), // unmapped: the ramp's codec
    ];
    expect(answers.map((a) => a.status)).to.deep.equal([202, 202, 202, 202, 202, 202, 202]);
    await eventually(() => flow!.events.length === 7, 3000, '7 events');
    expect(flow.events.map((e) => e.data)).to.deep.equal([{ a: 1 }, { b: 2 }, 'hello', { c: 3 }, { html: 'as json' }, { d: 4 }, { e: 5 }]);
  });

  it('answers 202 with an empty body once the body is an event, and sets the origin to the client host', async () => {
    flow = await startRestFlow();
    const answer = await curl(`${flow.base}/ingest`, ['-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary', '{"x":true}']);
    expect(answer.status).to.equal(202);
    expect(answer.body).to.equal('');
    expect(flow.events).to.have.length(1);
    expect(flow.events[0].data).to.deep.equal({ x: true });
    expect(flow.events[0].originUri).to.equal('svc-rest://127.0.0.1');
  });

  it('sets $request to the url (scheme, host, port, path, query), method and headers (lowercase names, lists of values)', async () => {
    flow = await startRestFlow();
    await curl(`${flow.base}/a/b%20c?x=1&y=two`, [
      '-X',
      'PUT',
      '-H',
      'Content-Type: application/json',
      '-H',
      'X-Multi: one',
      '-H',
      'X-Multi: two',
      '-H',
      'User-Agent: eddy-test',
      '--data-binary',
      '{}',
    ]);
    await eventually(() => flow!.events.length === 1, 3000, 'the event');
    expect(flow.events[0].meta.request).to.deep.equal({
      url: { scheme: 'http', host: '127.0.0.1', port: flow.port, path: '/a/b%20c', query: 'x=1&y=two' },
      method: 'PUT',
      headers: {
        host: [`127.0.0.1:${flow.port}`],
        'user-agent': ['eddy-test'],
        accept: ['*/*'],
        'content-type': ['application/json'],
        'x-multi': ['one', 'two'],
        'content-length': ['2'],
      },
    });
  });

  it("keeps headers named like Object's members (constructor, __proto__, toString) as headers, and goes on serving", async () => {
    flow = await startRestFlow();
    const answer = await curl(flow.base, ['-X', 'POST', '-H', 'Constructor: c', '-H', '__proto__: p', '-H', 'toString: t', '--data-binary', '{}']);
    expect(answer.status).to.equal(202);
    await eventually(() => flow!.events.length === 1, 3000, 'the event');
    const headers = (flow.events[0].meta.request as { headers: Record<string, string[]> }).headers;
    expect(Object.entries(headers).filter(([name]) => ['constructor', '__proto__', 'tostring'].includes(name))).to.deep.equal([
      ['constructor', ['c']],
      ['__proto__', ['p']],
      ['tostring', ['t']],
    ]);
    expect((await curl(flow.base, ['-X', 'POST', '--data-binary', '{}'])).status, 'the next request').to.equal(202);
  });

  it('$request.url: no port when the Host header names none; username, password and fragment from an absolute target', async () => {
    flow = await startRestFlow();
    await curl(flow.base, ['-H', 'Host: example.com']);
    await curl(flow.base, ['--request-target', 'http://ann:s%40cret@example.com:9000/p?q=1#frag']);
    await eventually(() => flow!.events.length === 2, 3000, 'two events');
    expect(flow.events[0].meta.request).to.have.deep.property('url', { scheme: 'http', host: 'example.com', path: '/' });
    expect(flow.events[1].meta.request).to.have.deep.property('url', {
      scheme: 'http',
      username: 'ann',
      password: 's@cret',
      host: 'example.com',
      port: 9000,
      path: '/p',
      query: 'q=1',
      fragment: 'frag',
    });
  });

  it('a request without a body (a GET) is an event whose data is null', async () => {
    flow = await startRestFlow();
    const answer = await curl(`${flow.base}/items/7`);
    expect(answer.status).to.equal(202);
    expect(flow.events.map((e) => [e.data, (e.meta.request as { method: string }).method])).to.deep.equal([[null, 'GET']]);
  });

  it('answers 400 with the error when the body makes no event; the error goes to the err port', async () => {
    flow = await startRestFlow();
    const answer = await curl(flow.base, ['-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary', 'not json']);
    expect(answer.status).to.equal(400);
    expect(answer.headers['content-type']).to.equal('application/json');
    expect(JSON.parse(answer.body).error).to.match(/JSON/);
    expect(flow.events).to.have.length(0);
    await eventually(() => flow!.errors.length === 1, 3000, 'the err event');
    expect((flow.errors[0].data as { raw: string }).raw).to.equal('not json');
  });

  it('each request is its own stream: lines splits one body, flushes its last line, and never joins two bodies', async () => {
    flow = await startRestFlow({ onramp: { preprocessors: ['lines'] } });
    const post = (body: string) => curl(flow!.base, ['-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary', body]);
    expect((await post('{"n":1}\n{"n":2}\n{"n":')).status).to.equal(202); // the partial last line fails alone
    expect((await post('3}\n{"n":4}')).status).to.equal(202);
    await eventually(() => flow!.events.length === 3 && flow!.errors.length === 2, 3000, '3 events, 2 errors');
    expect(flow.events.map((e) => e.data)).to.deep.equal([{ n: 1 }, { n: 2 }, { n: 4 }]);
    expect(flow.errors.map((e) => (e.data as { raw: string }).raw)).to.deep.equal(['{"n":', '3}']);
  });

  it('answers 413 for a body larger than max_body_bytes and makes no event', async () => {
    flow = await startRestFlow({ config: { max_body_bytes: 16 } });
    const big = await curl(flow.base, ['-X', 'POST', '--data-binary', '{"text":"this is more than sixteen bytes"}']);
    expect(big.status).to.equal(413);
    // chunked, so the size is found while reading
    const chunked = await curl(flow.base, ['-X', 'POST', '-H', 'Transfer-Encoding: chunked', '--data-binary', '{"text":"this is more than sixteen bytes"}']);
    expect(chunked.status).to.equal(413);
    const small = await curl(flow.base, ['-X', 'POST', '--data-binary', '{"ok":1}']);
    expect(small.status).to.equal(202);
    // the small body was sent after the big ones were answered, so an event made from a big one would be here before it
    await eventually(() => flow!.events.length >= 1, 3000, 'the small one');
    expect(flow.events.map((e) => e.data)).to.deep.equal([{ ok: 1 }]);
  });

  it('while the breaker is triggered no body is read and requests wait; on restore they are answered and become events', async () => {
    flow = await startRestFlow();
    const onramp = flow.runtime.onramp('/onramp/web/main')!.runtime;
    onramp.breaker.trigger('test');
    const statuses: number[] = [];
    const pending = [1, 2, 3].map((n) =>
      curl(flow!.base, ['-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary', `{"n":${n}}`]).then((a) => statuses.push(a.status)),
    );
    // all three requests arrived, their bodies unread: a request read while paused would be flowing (or done), and none is
    await eventually(() => onramp.inputs()!.open === 3, 5000, 'the three requests');
    expect(onramp.inputs(), 'requests read while paused').to.deep.equal({ open: 3, reading: 0, held: 0 });
    expect(statuses, 'answered while paused').to.deep.equal([]);
    expect(flow.events, 'events while paused').to.deep.equal([]);
    onramp.breaker.restore('test');
    await Promise.all(pending);
    expect(statuses).to.deep.equal([202, 202, 202]);
    expect(flow.events.map((e) => (e.data as { n: number }).n).sort()).to.deep.equal([1, 2, 3]);
  });

  it('keep-alive: many requests over one connection are each their own event', async () => {
    flow = await startRestFlow();
    const agentBase = flow.base;
    const answers: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${agentBase}/k`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ i }) });
      answers.push(res.status);
      await res.arrayBuffer();
    }
    expect(answers.every((s) => s === 202)).to.equal(true);
    expect(flow.events.map((e) => (e.data as { i: number }).i)).to.deep.equal([...Array(20).keys()]);
  });

  it('closing the instance releases the port and ends open connections', async () => {
    flow = await startRestFlow();
    const { port } = flow;
    // an open keep-alive connection that must not keep the server alive
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'GET', path: '/', agent: false, headers: { connection: 'keep-alive' } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
    await flow.stop();
    flow = undefined;
    const probe = createServer();
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((r) => probe.close(r));
  });
});
