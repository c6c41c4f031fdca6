// The canvas as a config document (what POST /config and config files take)
// and back. The operators form one pipeline named after the flow; each
// onramp feeds one of its inputs and each offramp is fed by one of its
// outputs. When every onramp's out feeds the same nodes and every offramp
// takes the same nodes' ports, the pipeline has just `in` and `out` and the
// flow is written in the compact `flow` form (docs/config-files.md);
// otherwise as a binding and its mapping.

const sameSet = (a, b) => a.length === b.length && a.every((x) => b.includes(x));
const nodeEnd = (w) => (w.port === 'out' ? w.from : `${w.from}/${w.port}`);
const isRamp = (n) => n?.kind === 'onramp' || n?.kind === 'offramp';
/** The instance a link names: a system artefact's own (`system`), else the binding's. */
const instanceOf = (n) => (n.system ? 'system' : '{instance}');

/**
 * The pipeline's interface: for each ramp port feeding operators (an
 * onramp's out or err, a linked offramp's replies) and each ramp the
 * operators feed (an offramp, or a linked onramp: its replies), the
 * pipeline port it goes through; and the wires from ramp to ramp, which
 * go straight into the binding.
 */
function ports(flow) {
  const node = (id) => flow.nodes.get(id);
  const sources = new Map(); // `ramp/port` → operator ids it feeds
  const sinks = new Map(); // ramp id → operator ends feeding it
  const direct = []; // ramp → ramp wires
  for (const w of flow.wires) {
    const [a, b] = [node(w.from), node(w.to)];
    if (isRamp(a) && b?.kind === 'operator') sources.set(`${w.from}/${w.port}`, [...(sources.get(`${w.from}/${w.port}`) ?? []), w.to]);
    if (a?.kind === 'operator' && isRamp(b)) sinks.set(w.to, [...(sinks.get(w.to) ?? []), nodeEnd(w)]);
    if (isRamp(a) && isRamp(b)) direct.push(w);
  }
  const sourceLists = [...sources.values()];
  const sinkLists = [...sinks.values()];
  const plain = (key) => node(key.split('/')[0]).kind === 'onramp' && key.endsWith('/out');
  const oneInput = [...sources.keys()].every(plain) && sourceLists.every((l) => sameSet(l, sourceLists[0]));
  const oneOutput = sinkLists.every((l) => sameSet(l, sinkLists[0]));
  const input = new Map([...sources.keys()].map((k) => [k, oneInput ? 'in' : `from_${k.replace('/', '_')}`]));
  const output = new Map([...sinks.keys()].map((k) => [k, oneOutput ? 'out' : `to_${k}`]));
  const ordinary = [...sources.keys(), ...sinks.keys()].every((k) => !node(k.split('/')[0]).system) && [...sinks.keys()].every((k) => node(k).kind === 'offramp');
  const compact = oneInput && oneOutput && ordinary && !direct.length && sources.size > 0 && sinks.size > 0;
  return { sources, sinks, direct, input, output, compact };
}

/** The pipeline port each ramp port feeding it goes through (`input`, by `ramp/port`) and each ramp it feeds (`output`, by ramp id). */
export function pipelinePorts(flow) {
  const { input, output } = ports(flow);
  return { input, output };
}

/** An onramp or offramp as its section lists it: id, type, codec, config, then the other fields it was opened with (`linked`, processors…). */
const artefact = (n) => ({
  id: n.id,
  type: n.type,
  ...(n.codec ? { codec: n.codec } : {}),
  ...(Object.keys(n.config).length ? { config: n.config } : {}),
  ...(n.extra ?? {}),
});

/** The flow as a config document: `{ onramp, offramp, pipeline, flow }` or `{ …, binding, mapping }`. */
export function toConfig(flow) {
  const nodes = [...flow.nodes.values()];
  const { sources, sinks, direct, input, output, compact } = ports(flow);
  const links = {};
  const link = (from, to) => (links[from] = [...new Set([...(links[from] ?? []), to])]);
  for (const [key, targets] of sources) for (const t of targets) link(input.get(key), t);
  for (const w of flow.wires) if (flow.nodes.get(w.from).kind === 'operator' && flow.nodes.get(w.to).kind === 'operator') link(nodeEnd(w), w.to);
  for (const [ramp, ends] of sinks) for (const end of ends) link(end, output.get(ramp));
  const operators = nodes.filter((n) => n.kind === 'operator');
  const section = (kind) => nodes.filter((n) => n.kind === kind && !n.system).map(artefact);
  const doc = {
    onramp: section('onramp'),
    offramp: section('offramp'),
    pipeline: operators.length
      ? [
          {
            id: flow.name,
            interface: { inputs: [...new Set(input.values())], outputs: [...new Set(output.values())] },
            nodes: operators.map((n) => ({ id: n.id, type: n.type, ...(Object.keys(n.config).length ? { config: n.config } : {}) })),
            links,
          },
        ]
      : [],
  };
  if (!sources.size && !sinks.size && !direct.length) return doc;
  if (compact) {
    doc.flow = [{ id: flow.name, from: [...sources.keys()].map((k) => k.split('/')[0]), via: flow.name, to: [...sinks.keys()] }];
    return doc;
  }
  const url = (id, port) => {
    const n = flow.nodes.get(id);
    return `/${n.kind}/${id}/${instanceOf(n)}/${port}`;
  };
  const bindingLinks = {};
  const add = (from, to) => (bindingLinks[from] = [...(bindingLinks[from] ?? []), to]);
  for (const [key, name] of input) {
    const [ramp, port] = key.split('/');
    add(url(ramp, port), `/pipeline/${flow.name}/{instance}/${name}`);
  }
  for (const [ramp, name] of output) add(`/pipeline/${flow.name}/{instance}/${name}`, url(ramp, 'in'));
  for (const w of direct) add(url(w.from, w.port), url(w.to, 'in'));
  doc.binding = [{ id: flow.name, links: bindingLinks }];
  doc.mapping = { [`/binding/${flow.name}/main`]: { instance: 'main' } };
  return doc;
}

/**
 * Which node a refusal of POST /config is about: `pipeline 'f': nodes[1].config.x: …`
 * is the pipeline's second node, `links.agg/lat: …` node agg, `onramp 'in': …` that onramp,
 * as does a replace refused because `onramp 'in' changed, but /onramp/in/x runs it …`.
 * `{ id, error }` with the error as the node's form reads it, or undefined.
 */
export function nodeOfError(flow, doc, message) {
  const m = /^(onramp|offramp|pipeline) '([^']+)'(?::| (?=changed, but))\s*(.*)$/s.exec(message);
  if (!m) return undefined;
  const [, kind, id, rest] = m;
  if (kind !== 'pipeline') return flow.nodes.has(id) ? { id, error: rest } : undefined;
  const node = /^nodes\[(\d+)\]\.(.*)$/s.exec(rest);
  if (node) return { id: doc.pipeline[0]?.nodes[Number(node[1])]?.id, error: node[2] };
  const linked = /^links\.([a-z][a-zA-Z_:]*)[/:]/.exec(rest);
  if (linked && flow.nodes.has(linked[1])) return { id: linked[1], error: rest };
  return undefined;
}
