import { expect } from 'chai';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { parse as parseYaml } from 'yaml';
import type { EddyEvent } from '../../../src/core/event';
import { eventually } from '../../helpers/runtime';
import { curl, recordingLogger, startRestFlow, type RestFlow } from './helpers';

const json = ['-X', 'POST', '-H', 'Content-Type: application/json', '--data-binary'];

describe('rest onramp (linked)', () => {
  let flow: RestFlow | undefined;
  afterEach(async () => {
    await flow?.stop();
    flow = undefined;
  });

  it('answers with the reply: $response.status and headers, the body in the codec of the reply Content-Type', async () => {
    flow = await startRestFlow({
      onramp: { linked: true },
      nodes: [
        {
          id: 'respond',
          type: 'runtime::cel',
          config: { meta: { response: '{"status": 201, "headers": {"x-eddy": ["a", "b"], "x-one": "1", "content-type": "application/yaml"}}' } },
        },
      ],
    });
    const answer = await curl(`${flow.base}/things`, [...json, '{"name":"kettle","n":3}']);
    expect(answer.status).to.equal(201);
    expect(answer.headers['x-eddy']).to.equal('a, b');
    expect(answer.headers['x-one']).to.equal('1');
    expect(answer.headers['content-type']).to.equal('application/yaml');
    expect(parseYaml(answer.body)).to.deep.equal({ name: 'kettle', n: 3 });
  });

  it('a reply without $response answers 200 in the onramp codec with its mime type', async () => {
    flow = await startRestFlow({ onramp: { linked: true } });
    const answer = await curl(flow.base, ['-X', 'POST', '-H', 'Content-Type: application/yaml', '--data-binary', 'a: [1, 2]']);
    expect(answer.status).to.equal(200);
    expect(answer.headers['content-type']).to.equal('application/json');
    expect(JSON.parse(answer.body)).to.deep.equal({ a: [1, 2] });
  });

  it('the onramp postprocessors apply to the reply body', async () => {
    flow = await startRestFlow({ onramp: { linked: true, codec: 'string', postprocessors: ['base64'] } });
    const answer = await curl(flow.base, ['-X', 'POST', '-H', 'Content-Type: text/plain', '--data-binary', 'hello']);
    expect(answer.status).to.equal(200);
    expect(answer.headers['content-type']).to.equal('text/plain');
    expect(answer.body).to.equal(Buffer.from('hello').toString('base64'));
  });

  it('answers an undecodable body with 400 at once, with the error', async () => {
    flow = await startRestFlow({ onramp: { linked: true }, config: { timeout: 60000 } });
    const answer = await curl(flow.base, [...json, '{oops']);
    expect(answer.status).to.equal(400);
    expect(JSON.parse(answer.body).error).to.be.a('string').and.match(/JSON/);
    expect(flow.events).to.have.length(0);
  });

  it('without a reply answers 504 after the timeout and frees the waiter: a late reply finds no request', async () => {
    const logger = recordingLogger();
    flow = await startRestFlow({ onramp: { linked: true }, config: { timeout: 200 }, replies: false, logger });
    const answer = await curl(flow.base, [...json, '{"q":1}']);
    expect(answer.status).to.equal(504);
    expect(JSON.parse(answer.body).error).to.match(/no reply within 200 ms/);
    expect(flow.events).to.have.length(1);
    // the reply comes too late: nobody waits for it any more
    flow.runtime.onramp('/onramp/web/main')!.runtime.reply(flow.events[0]);
    await eventually(() => logger.lines.some((l) => l.includes('dropped a late reply: its request no longer waits')), 2000, 'the late reply dropped');
  });

  it('while the breaker holds, a request is answered 503 with Retry-After at its deadline, counted from its arrival, and makes no event', async () => {
    flow = await startRestFlow({ onramp: { linked: true }, config: { timeout: 300 } });
    const onramp = flow.runtime.onramp('/onramp/web/main')!.runtime;
    onramp.breaker.trigger('test');
    const answers = await Promise.all([1, 2, 3].map((n) => curl(flow!.base, [...json, `{"n":${n}}`])));
    expect(answers.map((a) => [a.status, a.headers['retry-after']])).to.deep.equal(Array(3).fill([503, '1']));
    for (const a of answers)
      expect(JSON.parse(a.body).error).to.equal('not taken within 300 ms: the onramp is held back by backpressure; nothing was processed');
    expect(onramp.inputs(), 'nothing left open or held').to.deep.equal({ open: 0, reading: 0, held: 0 });
    // restored: the next request is taken and answered as usual, and it is the only event
    onramp.breaker.restore('test');
    const served = await curl(flow.base, [...json, '{"n":4}']);
    expect(served.status).to.equal(200);
    expect(JSON.parse(served.body)).to.deep.equal({ n: 4 });
    expect(flow.events.map((e) => e.data)).to.deep.equal([{ n: 4 }]);
  });

  it('its events carry $deadline: the arrival time plus timeout, on the runtime clock', async () => {
    flow = await startRestFlow({ onramp: { linked: true }, config: { timeout: 60000 }, replies: false });
    const before = Date.now();
    const pending = curl(flow.base, [...json, '{"d":1}']);
    await eventually(() => flow!.events.length === 1, 3000, 'the request event');
    const deadline = flow.events[0].meta.deadline as number;
    expect(deadline).to.be.within(before + 60000, Date.now() + 60000);
    flow.runtime.onramp('/onramp/web/main')!.runtime.reply(flow.events[0]);
    expect((await pending).status).to.equal(200);
  });

  it('a client that has not sent its whole body by the deadline is answered 408, and its connection closed', async () => {
    flow = await startRestFlow({ onramp: { linked: true }, config: { timeout: 300 } });
    const socket = connect(flow.port, '127.0.0.1');
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"partial"');
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    // the server closes the connection after the answer: the whole answer is in once it ends
    await new Promise<void>((resolve, reject) => {
      socket.on('end', resolve);
      socket.on('error', reject);
    });
    socket.destroy();
    expect(text).to.match(/^HTTP\/1\.1 408 /);
    expect(text).to.match(/\r\nconnection: close\r\n/i);
    expect(text).to.contain('{"error":"the request body did not arrive within 300 ms"}');
    expect(flow.events).to.deep.equal([]);
  });

  it('a reply that arrives later (asynchronously) still finds its request', async () => {
    flow = await startRestFlow({ onramp: { linked: true }, replies: false });
    const pending = curl(flow.base, [...json, '{"later":true}']);
    await eventually(() => flow!.events.length === 1, 3000, 'the request event');
    const request = flow.events[0];
    const reply: EddyEvent = { ...request, data: { answer: 42 }, meta: { ...request.meta, response: { status: 202 } } };
    flow.runtime.onramp('/onramp/web/main')!.runtime.reply(reply);
    const answer = await pending;
    expect(answer.status).to.equal(202);
    expect(JSON.parse(answer.body)).to.deep.equal({ answer: 42 });
  });

  it('stopping the onramp answers its waiting requests 503', async () => {
    flow = await startRestFlow({ onramp: { linked: true }, config: { timeout: 60000 }, replies: false });
    const pending = curl(flow.base, [...json, '{"wait":true}']);
    await eventually(() => flow!.events.length === 1, 3000, 'the request event');
    await flow.runtime.deactivate('binding', 'web', 'main');
    const answer = await pending;
    expect(answer.status).to.equal(503);
    expect(JSON.parse(answer.body).error).to.match(/stopped/);
  });

  it('a batched reply is answered 500 with a clear error, for every request in the batch', async () => {
    flow = await startRestFlow({ onramp: { linked: true }, nodes: [{ id: 'batch', type: 'generic::batch', config: { count: 2 } }] });
    const answers = await Promise.all([curl(flow.base, [...json, '{"m":1}']), curl(flow.base, [...json, '{"m":2}'])]);
    expect(answers.map((a) => a.status)).to.deep.equal([500, 500]);
    for (const a of answers) expect(JSON.parse(a.body).error).to.match(/batch/);
  });

  it('an invalid $response.status answers 500 naming it', async () => {
    flow = await startRestFlow({
      onramp: { linked: true },
      nodes: [{ id: 'respond', type: 'runtime::cel', config: { meta: { response: '{"status": 42}' } } }],
    });
    const answer = await curl(flow.base, [...json, '{}']);
    expect(answer.status).to.equal(500);
    expect(JSON.parse(answer.body).error).to.match(/\$response\.status/);
  });

  it('1,000 concurrent requests, each on its own connection, each get their own reply', async function () {
    this.timeout(15000);
    flow = await startRestFlow({ onramp: { linked: true }, config: { timeout: 10000 } });
    const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
    const post = (i: number) =>
      new Promise<{ status: number; body: unknown }>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port: flow!.port, method: 'POST', path: `/n/${i}`, agent, headers: { 'content-type': 'application/json' } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ i, pad: 'x'.repeat(i % 50) }));
      });
    try {
      const answers = await Promise.all(Array.from({ length: 1000 }, (_, i) => post(i)));
      expect(answers.filter((a) => a.status !== 200)).to.deep.equal([]);
      answers.forEach((a, i) => expect(a.body).to.deep.equal({ i, pad: 'x'.repeat(i % 50) }));
    } finally {
      agent.destroy();
    }
  });
});
