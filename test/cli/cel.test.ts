import { expect } from 'chai';
import { main } from '../../src/cli/main';

async function eddy(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t), env: {} });
  return { code, out, err };
}

describe('eddy cel', () => {
  it('prints the result as one JSON line on stdout and the engine that gave it on stderr', async () => {
    expect(await eddy(['cel', 'event.count + 1', '--event', '{"count": 41}'])).to.deep.equal({ code: 0, out: '42\n', err: 'engine: compiled\n' });
    expect(await eddy(['cel', '{"app": meta.app, "big": event.n > 2}', '--event', '{"n": 3}', '--meta', '{"app": "web"}'])).to.deep.equal({
      code: 0,
      out: '{"app":"web","big":true}\n',
      err: 'engine: compiled\n',
    });
    // outside the compiled subset: the interpreter
    expect(await eddy(['cel', 'duration("90s")'])).to.deep.equal({ code: 0, out: '"90s"\n', err: 'engine: interpreted\n' });
    // the event and meta are {} unless given
    expect(await eddy(['cel', 'size(event) + size(meta)'])).to.deep.include({ code: 0, out: '0\n' });
  });

  it('reads --event as the json codec does: integers beyond 2^53 stay exact', async () => {
    expect((await eddy(['cel', 'event.id + 1', '--event', '{"id": 9007199254740993}'])).out).to.equal('9007199254740994\n');
  });

  it('a syntax error is exit 1 with its line and column; an evaluation error exit 1 with the reason', async () => {
    const syntax = await eddy(['cel', 'event.a +']);
    expect(syntax).to.deep.include({ code: 1, out: '' });
    expect(syntax.err).to.match(/^error: syntax error at 1:\d+: /);
    const missing = await eddy(['cel', 'event.nope', '--event', '{"a": 1}']);
    expect(missing).to.deep.equal({ code: 1, out: '', err: 'error: evaluation failed: field not found: nope\n' });
  });

  it('bad JSON in --event or --meta, no expression or two, are exit 2 naming what is wrong', async () => {
    for (const [argv, message] of [
      [['cel', 'event', '--event', '{bad'], '--event: not JSON: '],
      [['cel', 'meta', '--meta', ''], '--meta: not JSON: '],
      [['cel'], 'which expression?'],
      [['cel', 'event.a', '+ 1'], "one expression only (quote it): 'event.a' and '+ 1'"],
    ] as const) {
      const run = await eddy([...argv]);
      expect(run.code, argv.join(' ')).to.equal(2);
      expect(run.err, argv.join(' ')).to.include(`error: ${message}`);
      expect(run.err).to.include('usage: eddy cel');
    }
  });
});
