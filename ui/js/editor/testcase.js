// A test case skeleton for `eddy test` (docs/testing-pipelines.md) from the
// events the tap side bar captured: each event a letter in `values` (or in
// `events` when it carries meta or is a batch), the captured sequence the
// marble of the pipeline port the tapped wire goes through. Events tapped
// where they enter the pipeline are its input; the expected output is left
// to fill in (`"|"`: nothing, which `eddy test` then shows the actual
// diagram against). Events tapped where they leave it are the expected
// output, and the input is left to fill in.
import { pipelinePorts } from './config.js';
import { toYaml } from './yaml.js';

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** The case file's text, or `{ error }` when the wire is not a port of the pipeline. */
export function testCase(flow, wire, events) {
  const { input, output } = pipelinePorts(flow);
  const from = flow.nodes.get(wire.from);
  const to = flow.nodes.get(wire.to);
  const entering = from && from.kind !== 'operator' && to?.kind === 'operator' ? input.get(`${wire.from}/${wire.port}`) : undefined;
  const leaving = from?.kind === 'operator' && to && to.kind !== 'operator' ? output.get(wire.to) : undefined;
  if (!entering && !leaving) return { error: 'a test case is made from a wire entering or leaving the pipeline' };
  if (!events.length) return { error: 'no events captured yet: let the tap run first' };
  const kept = events.slice(-LETTERS.length);
  const values = {};
  const withMeta = {};
  let marble = '';
  kept.forEach((e, i) => {
    const letter = LETTERS[i];
    marble += letter;
    const meta = e.meta && Object.keys(e.meta).length ? e.meta : undefined;
    if (e.batch) withMeta[letter] = { batch: e.data };
    else if (meta) withMeta[letter] = { data: e.data, meta };
    else values[letter] = e.data;
  });
  marble += '|';
  const outputs = [...new Set(output.values())];
  const inputs = [...new Set(input.values())];
  const doc = {
    pipeline: `${flow.name}.yaml`,
    cases: [
      {
        name: `${flow.name}: ${kept.length} events ${entering ? 'into' : 'out of'} ${entering ?? leaving}`,
        ...(Object.keys(values).length ? { values } : {}),
        ...(Object.keys(withMeta).length ? { events: withMeta } : {}),
        in: Object.fromEntries(inputs.map((p) => [p, p === entering ? marble : '|'])),
        out: Object.fromEntries((leaving ? [leaving] : outputs).map((p) => [p, p === leaving ? marble : '|'])),
      },
    ],
  };
  const skipped = events.length - kept.length;
  const header = [
    `# eddy test ${flow.name}.cases.yaml: a skeleton from ${kept.length} events tapped on ${wire.from} ${wire.port} → ${wire.to}${skipped ? ` (the ${skipped} older ones left out: one letter each)` : ''}.`,
    `# ${flow.name}.yaml is this canvas exported (Export). ${entering ? 'Write the expected output marbles under out' : 'Write the input marbles under in'}; a "|" alone means nothing until the end.`,
  ];
  return { text: `${header.join('\n')}\n${toYaml(doc)}` };
}
