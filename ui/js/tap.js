// The Tap view: the events passing one port, live. Read with fetch and a
// stream reader rather than EventSource, which cannot send the
// Authorization header an API with --api-token needs.
import { headers, instancePath, parseUrl } from './api.js';
import { $, h } from './dom.js';

const KEEP = 200; // events shown; older ones scroll away

let current; // AbortController of the running tap

/** Server-Sent Events from a byte stream: calls `onEvent(type, data)` per event. */
export async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, '\n');
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let type = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue; // a comment: keep-alive
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') type = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length) onEvent(type, data.join('\n'));
    }
  }
}

export function tapOptions(status) {
  const select = $('#tap-port');
  const keep = select.value;
  const options = [];
  for (const instance of [...status.instances].sort((a, b) => instancePath(a).localeCompare(instancePath(b)))) {
    for (const port of instance.ports) {
      const value = `${instancePath(instance)}#${port.port}`;
      options.push(h('option', { value, selected: value === keep }, `${instancePath(instance)} ${port.direction} ${port.port}`));
    }
  }
  if (options.map((o) => o.value).join() !== [...select.options].map((o) => o.value).join()) select.replaceChildren(...options);
}

function show(cls, text) {
  const list = $('#tap-events');
  list.prepend(h('li', { class: cls }, text));
  while (list.children.length > KEEP) list.lastElementChild.remove();
}

function setState(text, running) {
  $('#tap-state').textContent = text;
  $('#tap-start').disabled = running;
  $('#tap-stop').disabled = !running;
}

export function stopTap() {
  current?.abort();
  current = undefined;
}

export async function startTap(url, port) {
  stopTap();
  const { kind, artefact, instance } = parseUrl(url);
  const sample = Math.max(1, Number($('#tap-sample').value) || 1);
  const path = `/tap/${kind}/${artefact}/${instance}/${port}?sample=${sample}`;
  const controller = new AbortController();
  current = controller;
  $('#tap-events').replaceChildren();
  setState(`tapping ${url} ${port}…`, true);
  let count = 0;
  try {
    const res = await fetch(path, { headers: headers({ accept: 'text/event-stream' }), signal: controller.signal });
    if (!res.ok) {
      const text = await res.text();
      let message = text;
      try {
        message = JSON.parse(text).error ?? text;
      } catch {
        // not JSON
      }
      setState(`tap refused (${res.status}): ${message}`, false);
      return;
    }
    await readEvents(res.body, (type, data) => {
      const parsed = JSON.parse(data);
      if (type === 'event') {
        count++;
        setState(`tapping ${url} ${port}: ${count} events`, true);
        show('event', JSON.stringify({ seq: parsed.seq, data: parsed.data, meta: parsed.meta, origin: parsed.origin, ingest_ns: parsed.ingest_ns }));
      } else if (type === 'missed') show('missed', `missed ${parsed.missed} (${parsed.total_missed} in all): this tap was too slow`);
      else if (type === 'end') show('end', `tap ended: ${parsed.reason}`);
    });
    if (current === controller) setState(`tap closed after ${count} events`, false);
  } catch (err) {
    if (controller.signal.aborted) setState(`stopped after ${count} events`, false);
    else setState(`tap failed: ${err.message}`, false);
  } finally {
    if (current === controller) current = undefined;
  }
}
