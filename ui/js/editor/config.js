// The canvas as a config document (what POST /config and config files take)
// and back. The operators form one pipeline named after the flow; each
// onramp feeds one of its inputs and each offramp is fed by one of its
// outputs. When every onramp's out feeds the same nodes and every offramp
// takes the same nodes' ports, the pipeline has just `in` and `out` and the
// flow is written in the compact `flow` form (docs/config-files.md);
// otherwise as a binding and its mapping.

const sameSet = (a, b) => a.length === b.length && a.every((x) => b.includes(x));
const nodeEnd = (w) => (w.port === 'out' ? w.from : `${w.from}/${w.port}`);

/** The pipeline's interface: for each onramp port and each offramp, the pipeline port it goes through. */
function ports(flow) {
  const kind = (id) => flow.nodes.get(id)?.kind;
  const sources = new Map(); // `onramp/port` → operator ids it feeds
  const sinks = new Map(); // offramp id → operator ends feeding it
  for (const w of flow.wires) {
    if (kind(w.from) === 'onramp' && kind(w.to) === 'operator') sources.set(`${w.from}/${w.port}`, [...(sources.get(`${w.from}/${w.port}`) ?? []), w.to]);
    if (kind(w.from) === 'operator' && kind(w.to) === 'offramp') sinks.set(w.to, [...(sinks.get(w.to) ?? []), nodeEnd(w)]);
  }
  const sourceLists = [...sources.values()];
  const sinkLists = [...sinks.values()];
  const oneInput = [...sources.keys()].every((k) => k.endsWith('/out')) && sourceLists.every((l) => sameSet(l, sourceLists[0]));
  const oneOutput = sinkLists.every((l) => sameSet(l, sinkLists[0]));
  const input = new Map([...sources.keys()].map((k) => [k, oneInput ? 'in' : `from_${k.replace('/', '_')}`]));
  const output = new Map([...sinks.keys()].map((k) => [k, oneOutput ? 'out' : `to_${k}`]));
  return { sources, sinks, input, output, compact: oneInput && oneOutput && sources.size > 0 && sinks.size > 0 };
}

const artefact = (n) => ({ id: n.id, type: n.type, ...(n.codec ? { codec: n.codec } : {}), ...(Object.keys(n.config).length ? { config: n.config } : {}) });

/** The flow as a config document: `{ onramp, offramp, pipeline, flow }` or `{ …, binding, mapping }`. */
export function toConfig(flow) {
  const nodes = [...flow.nodes.values()];
  const { sources, sinks, input, output, compact } = ports(flow);
  const links = {};
  const link = (from, to) => (links[from] = [...new Set([...(links[from] ?? []), to])]);
  for (const [key, targets] of sources) for (const t of targets) link(input.get(key), t);
  for (const w of flow.wires) if (flow.nodes.get(w.from).kind === 'operator' && flow.nodes.get(w.to).kind === 'operator') link(nodeEnd(w), w.to);
  for (const [offramp, ends] of sinks) for (const end of ends) link(end, output.get(offramp));
  const operators = nodes.filter((n) => n.kind === 'operator');
  const doc = {
    onramp: nodes.filter((n) => n.kind === 'onramp').map(artefact),
    offramp: nodes.filter((n) => n.kind === 'offramp').map(artefact),
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
  if (!sources.size && !sinks.size) return doc;
  if (compact) {
    doc.flow = [{ id: flow.name, from: [...sources.keys()].map((k) => k.split('/')[0]), via: flow.name, to: [...sinks.keys()] }];
    return doc;
  }
  const bindingLinks = {};
  for (const [key, name] of input) {
    const [onramp, port] = key.split('/');
    bindingLinks[`/onramp/${onramp}/{instance}/${port}`] = [`/pipeline/${flow.name}/{instance}/${name}`];
  }
  for (const [offramp, name] of output) {
    const from = `/pipeline/${flow.name}/{instance}/${name}`;
    bindingLinks[from] = [...(bindingLinks[from] ?? []), `/offramp/${offramp}/{instance}/in`];
  }
  doc.binding = [{ id: flow.name, links: bindingLinks }];
  doc.mapping = { [`/binding/${flow.name}/main`]: { instance: 'main' } };
  return doc;
}

/**
 * Which node a refusal of POST /config is about: `pipeline 'f': nodes[1].config.x: …`
 * is the pipeline's second node, `links.agg/lat: …` node agg, `onramp 'in': …` that onramp.
 * `{ id, error }` with the error as the node's form reads it, or undefined.
 */
export function nodeOfError(flow, doc, message) {
  const m = /^(onramp|offramp|pipeline) '([^']+)': (.*)$/s.exec(message);
  if (!m) return undefined;
  const [, kind, id, rest] = m;
  if (kind !== 'pipeline') return flow.nodes.has(id) ? { id, error: rest } : undefined;
  const node = /^nodes\[(\d+)\]\.(.*)$/s.exec(rest);
  if (node) return { id: doc.pipeline[0]?.nodes[Number(node[1])]?.id, error: node[2] };
  const linked = /^links\.([a-z][a-zA-Z_:]*)[/:]/.exec(rest);
  if (linked && flow.nodes.has(linked[1])) return { id: linked[1], error: rest };
  return undefined;
}
