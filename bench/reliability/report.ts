/**
 * docs/reliability.md: a fixed introduction, then one block per section
 * between `<!-- reliability:NAME -->` and `<!-- /reliability:NAME -->`
 * markers. Running one section replaces only its block, so every block
 * says when, where and with which command its own figures were measured.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { FuzzResult } from './fuzz';
import type { Kill9Result } from './kill9';
import type { ShutdownResult } from './shutdown';
import { rssSlopeMbPerHour, type SoakResult } from './soak';
import { fmt } from './common';

export const SECTIONS = ['kill9', 'fuzz', 'soak', 'shutdown'] as const;
export type Section = (typeof SECTIONS)[number];

const TITLES: Record<Section, string> = {
  kill9: '1. kill -9 while delivering: `qos::wal` → file offramp',
  fuzz: '2. Fuzzing: the REST API and mutated events',
  soak: '3. Soak: a paced flow whose TCP peer keeps disconnecting',
  shutdown: '4. Graceful shutdown: SIGTERM to a busy flow',
};

/** Where, when and how a section was run. */
export interface RunFacts {
  date: string;
  command: string;
  machine: string;
  commit: string;
  seconds: number;
  loadBefore: string;
}

const INTRO = `# eddy reliability report

Produced by \`npm run reliability\` (the code is in \`bench/reliability/\`):
every figure here comes from the script's last run on the machine named in
each section, with the date and the exact command. Everything runs on
loopback against \`bin/eddy\` child processes and stops by itself.

\`\`\`sh
npm run reliability                 # every section (about 40 minutes: the soak takes 30)
npm run reliability -- kill9        # one section: kill9, fuzz, soak, shutdown (several may be named)
RELIABILITY_SOAK_MIN=1 npm run reliability -- soak   # a short soak
\`\`\`

Settings (environment): \`RELIABILITY_KILL9_RUNS\` (4), \`RELIABILITY_KILL9_EVENTS\`
(100000), \`RELIABILITY_FUZZ_REQUESTS\` (5000), \`RELIABILITY_FUZZ_LINES\` (20000),
\`RELIABILITY_FUZZ_SEED\` (11), \`RELIABILITY_SOAK_MIN\` (30), \`RELIABILITY_SOAK_RATE\`
(3000 events/s), \`RELIABILITY_SOAK_DISCONNECT_S\` (180), \`RELIABILITY_SOAK_SAMPLE_S\` (5),
\`RELIABILITY_SHUTDOWN_RUNS\` (5), \`RELIABILITY_SHUTDOWN_STEP\` (20000 lines),
\`RELIABILITY_OUT\` (where the report goes, default \`docs/reliability.md\`; the plot
goes beside it), \`RELIABILITY_KEEP\` (keep the temporary directories).
A run alone replaces only its own section below.
`;

const begin = (s: Section) => `<!-- reliability:${s} -->`;
const end = (s: Section) => `<!-- /reliability:${s} -->`;

/** Replaces (or adds) one section's block in the report at `path`, keeping the others. */
export function writeSection(path: string, section: Section, body: string): void {
  const old = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const blocks = new Map<Section, string>();
  for (const s of SECTIONS) {
    const from = old.indexOf(begin(s));
    const to = old.indexOf(end(s));
    if (from !== -1 && to > from) blocks.set(s, old.slice(from, to + end(s).length));
  }
  blocks.set(section, `${begin(section)}\n${body.trim()}\n${end(section)}`);
  const parts = [INTRO];
  for (const s of SECTIONS) parts.push(blocks.get(s) ?? `${begin(s)}\n## ${TITLES[s]}\n\nNot run yet: \`npm run reliability -- ${s}\`.\n${end(s)}`);
  writeFileSync(path, parts.join('\n\n') + '\n');
}

function factsLine(f: RunFacts): string {
  return `Measured ${f.date} with \`${f.command}\` on ${f.machine}, commit ${f.commit}; load average ${f.loadBefore} at the start; the section took ${fmt(f.seconds)} s.`;
}

export function failedSection(section: Section, facts: RunFacts, error: Error): string {
  return `## ${TITLES[section]}\n\n${factsLine(facts)}\n\n**The run failed:** ${error.message.replace(/\n/g, ' ').slice(0, 1500)}\n`;
}

const table = (head: string[], rows: (string | number)[][]): string =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

/** Inline code on one line: whitespace runs become one space, backticks quotes; in a table cell pipes are escaped. */
const code = (text: string, inTable = false): string => {
  const flat = text.replace(/\s+/g, ' ').replace(/`/g, "'");
  return `\`${inTable ? flat.replace(/\|/g, '\\|') : flat}\``;
};

const statuses = (m: Record<string, number>): string =>
  Object.entries(m)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, n]) => `${s}: ${fmt(n)}`)
    .join(', ');

export function kill9Section(r: Kill9Result, facts: RunFacts): string {
  const lost = r.runs.reduce((a, x) => a + x.lost, 0);
  const dup = r.runs.reduce((a, x) => a + x.duplicated, 0);
  return `## ${TITLES.kill9}

${factsLine(facts)}

Each run: a blaster puts ${fmt(r.events)} events \`{"id":1}\` … \`{"id":${r.events}}\` into a
pipeline holding only \`qos::wal\` (its own directory per run), whose output
is linked to nothing, so the WAL keeps every one (the pipeline's metrics say
when all are written), and that process is killed. Then the same pipeline on
the same WAL directory, linked to a file offramp, is started; when the file
holds the run's number of lines the process gets \`kill -9\`. The file is put
aside and the same config is started again, until the two files together
hold every id, or nothing more has been written for ${fmt(r.quietMs / 1000, 1)} s; then it
gets SIGTERM. Every event was acknowledged to its source by the WAL before the
kill, so none may be missing; duplicates are allowed (at-least-once:
events written but not yet acknowledged when the process died are replayed).

${table(
  [
    'run',
    'kill at (lines)',
    'lines in the file after the kill',
    'last id before the kill',
    'lines the restart wrote',
    'lost',
    'duplicated',
    'lost ids',
    'restart ended',
  ],
  r.runs.map((x) => [
    x.run,
    fmt(x.killAt),
    fmt(x.linesAtKill),
    fmt(x.lastIdBeforeKill),
    fmt(x.replayed),
    `**${fmt(x.lost)}**`,
    fmt(x.duplicated),
    x.lostIds || '–',
    x.restartEnded === 'complete' ? 'every id present' : 'nothing more came',
  ]),
)}

In total, over ${r.runs.length} run${r.runs.length === 1 ? '' : 's'} of ${fmt(r.events)} events: **${fmt(lost)} lost**, ${fmt(dup)} duplicated.
`;
}

export function fuzzSection(r: FuzzResult, facts: RunFacts): string {
  const rest = r.rest;
  const ev = r.events;
  const accounted = (ev.out ?? 0) + (ev.err ?? 0);
  const lines: string[] = [];
  lines.push(`## ${TITLES.fuzz}\n\n${factsLine(facts)}\n`);
  lines.push(`### REST API

${fmt(rest.requests)} generated requests (fast-check, seed ${rest.seed}; generators in
\`bench/reliability/fuzz-gen.ts\`) to \`eddy server run\` over HTTP on loopback,
one at a time: publishes with valid, damaged and random bodies (JSON, YAML,
bytes), activations, reads and deletes at the spec's paths with pooled and
random ids, and a sixth of anything at all (method, path, body); random
Content-Type, Accept (with q-values) and sometimes a foreign Origin. After
every failed request that was not a GET or HEAD, every kind's list and every
artefact's state record were read again and compared with before it.

${table(
  ['figure', 'value'],
  [
    ['requests', fmt(rest.requests)],
    ['statuses', statuses(rest.statuses)],
    ['**5xx answers**', `**${fmt(rest.serverErrors)}**`],
    ['requests without an answer', fmt(rest.noAnswer)],
    ['**server crashes**', `**${rest.crashes.length}**`],
    ['state checks after failed requests', fmt(rest.stateChecks)],
    ['**state changed by a failed request**', `**${rest.stateChanges.length}**`],
    ['successful requests that changed the state', fmt(rest.successfulChanges)],
    ['answer time p50 / p99 / max', `${fmt(rest.latencyMs.p50, 1)} / ${fmt(rest.latencyMs.p99, 1)} / ${fmt(rest.latencyMs.max, 0)} ms`],
    ['answers slower than 1 s', fmt(rest.latencyMs.over1s)],
    ['duration', `${fmt(rest.seconds)} s`],
  ],
)}
`);
  if (rest.hostile.length) {
    lines.push(`Hostile bodies among them (deep nesting, megabytes, YAML alias expansion); while
each was in flight for more than 100 ms, a second connection asked for \`/version\`:

${table(
  ['body', 'count', 'statuses', 'slowest answer', 'slowest /version meanwhile'],
  rest.hostile.map((h) => [
    h.name,
    h.count,
    statuses(h.statuses),
    `${fmt(h.maxMs)} ms`,
    h.maxProbeMs === undefined ? 'answered within 100 ms' : `${fmt(h.maxProbeMs)} ms`,
  ]),
)}
`);
  }
  if (rest.examples500.length) lines.push(`5xx answers (first ${rest.examples500.length}):\n\n${rest.examples500.map((e) => `- ${code(e)}`).join('\n')}\n`);
  if (rest.stateChanges.length)
    lines.push(
      `State changed by failed requests (first 5):\n\n${rest.stateChanges
        .slice(0, 5)
        .map((c) => `- ${c.status} for ${code(c.request)}: ${code(c.before)} became ${code(c.after)}`)
        .join('\n')}\n`,
    );
  if (rest.crashes.length)
    lines.push(
      `Crashes:\n\n${rest.crashes.map((c) => `- after request ${c.afterRequest}: exit ${c.exit}; stderr ends ${code(c.stderr.slice(-300))}`).join('\n')}\n`,
    );

  lines.push(`### Mutated events into a tcp onramp

${fmt(ev.lines)} generated lines (seed ${ev.seed}): the sample events of
\`bench/data/data.json.xz\` intact and damaged byte by byte, random JSON values,
random bytes, and edge values (±2^53 + 1, 2^64 − 1, 1e400, lone surrogates,
overlong UTF-8, a byte order mark, an empty line), written over ${ev.connections}
connections in random chunk sizes of 1 to 4096 bytes, each connection's last
line without a newline, to a tcp onramp with \`preprocessors: [lines]\` and the
json codec; \`out\` and \`err\` go to their own offramps. Every line is one
frame, so out + err must equal the lines sent. The oracle is strict UTF-8
decoding, then \`JSON.parse\`.

${table(
  ['figure', 'value'],
  [
    ['lines sent', fmt(ev.lines)],
    ['bytes sent / read by the onramp', `${fmt(ev.bytesSent)} / ${ev.bytesRead === undefined ? '?' : fmt(ev.bytesRead)}`],
    ['events on `out`', ev.out === undefined ? '?' : fmt(ev.out)],
    ['events on `err`', ev.err === undefined ? '?' : fmt(ev.err)],
    ['**out + err − lines sent**', `**${fmt(accounted - ev.lines)}**`],
    ['valid JSON by the oracle', fmt(ev.expectedOut)],
    ['valid by the oracle but on `err` / invalid but on `out`', `${ev.rejectedValid ?? '?'} / ${ev.acceptedInvalid ?? '?'}`],
    ['crash', ev.crashed ?? 'none'],
    ['duration', `${fmt(ev.seconds)} s`],
  ],
)}

${table(
  ['kind of line', 'lines', 'valid by the oracle'],
  Object.entries(ev.byKind).map(([k, v]) => [k, fmt(v.lines), fmt(v.valid)]),
)}
`);
  if (ev.errors?.length)
    lines.push(
      `Most frequent errors on \`err\` (digits shown as N):\n\n${table(
        ['error', 'count'],
        ev.errors.map((e) => [code(e.message, true), fmt(e.count)]),
      )}\n`,
    );
  if (ev.disagreements?.length) lines.push(`Where eddy and the oracle disagree:\n\n${ev.disagreements.map((d) => `- ${code(d)}`).join('\n')}\n`);
  return lines.join('\n');
}

export function soakSection(r: SoakResult, facts: RunFacts, pngName: string): string {
  const mb = (b: number) => fmt(b / 1048576, 1);
  const rss = r.samples.map((s) => s.rssBytes);
  const warm = r.samples.find((s) => s.t >= 60) ?? r.samples[0];
  const slope = rssSlopeMbPerHour(r.samples, r.wallSeconds / 2);
  const lost = r.sent === undefined ? undefined : r.sent - r.received;
  const cpuPct = r.cpuSeconds === undefined ? undefined : (100 * r.cpuSeconds) / r.wallSeconds;
  return `## ${TITLES.soak}

${factsLine(facts)}

A blaster replays the sample events of \`bench/data/data.json.xz\` at ${fmt(r.rate)} events/s
(${fmt(r.events)} in all, ${fmt(r.minutes, 1)} minutes) through \`runtime::cel\` (a class and
dimensions in meta, two fields set, one removed) and \`generic::batch\` (${r.batch.count}
events or ${r.batch.timeoutMs} ms) to a tcp offramp. Its peer is a TCP server run by the
script, which counts the lines it receives and resets every open connection
every ${fmt(r.disconnectEverySecs)} s; the offramp reconnects by itself. The eddy process's
RSS (VmRSS in /proc) is read every ${fmt(r.sampleEverySecs, 1)} s. When the source is done and
nothing more arrives, the process gets SIGTERM.

![RSS of the eddy process over the soak](${pngName})

${table(
  ['figure', 'value'],
  [
    ['events emitted by the blaster', r.sent === undefined ? '?' : fmt(r.sent)],
    ['events received by the peer', fmt(r.received)],
    [
      'events lost (emitted − received)',
      lost === undefined ? '?' : `${fmt(lost)} (${r.disconnects.length ? fmt(lost / r.disconnects.length, 1) : '–'} per disconnect)`,
    ],
    ['batches into the offramp / sent / failed', `${r.offramp.in ?? '?'} / ${r.offramp.out ?? '?'} / ${r.offramp.error ?? '?'}`],
    ['disconnects by the peer', fmt(r.disconnects.length)],
    ['connections the offramp made (1 + reconnects)', fmt(r.connections)],
    [
      'RSS first sample / after 1 min / min / max / last',
      `${mb(rss[0] ?? 0)} / ${mb(warm?.rssBytes ?? 0)} / ${mb(Math.min(...rss))} / ${mb(Math.max(...rss))} / ${mb(rss.at(-1) ?? 0)} MB`,
    ],
    ['RSS trend over the second half (least squares)', slope === undefined ? '?' : `${fmt(slope, 1)} MB per hour`],
    ['CPU', cpuPct === undefined ? '?' : `${fmt(r.cpuSeconds ?? 0)} s, ${fmt(cpuPct, 1)} % of one core on average`],
    ['exit after SIGTERM', `status ${r.exitCode} after ${fmt(r.exitMs)} ms`],
    ['wall time', `${fmt(r.wallSeconds)} s${r.cutShort ? ' (stopped at the deadline before the source was done)' : ''}`],
  ],
)}

Events here are not transactional (a blaster ignores acks and fails): an
event the offramp fails while its peer is away, or bytes in the peer's
socket when it resets, are gone. \`qos::wal\` before the offramp would replay
them (section 1).
`;
}

export function shutdownSection(r: ShutdownResult, facts: RunFacts): string {
  const ms = r.runs.map((x) => x.exitMs).sort((a, b) => a - b);
  const lost = r.runs.reduce((a, x) => a + x.lost, 0);
  return `## ${TITLES.shutdown}

${factsLine(facts)}

A blaster at full speed sends \`{"id":1}\`, \`{"id":2}\`, … to two pipelines: one
batches (\`generic::batch\`, ${r.batch.count} events or ${r.batch.timeoutMs} ms) into a file offramp, the
other passes each event to \`system::stdout\`, which the script reads as the
witness of what the source emitted. Once the file holds a number of lines
(different per run) the process gets SIGTERM; the time is from the signal to
the process's exit. Lost = ids the witness saw that are not in the file.

${table(
  ['run', 'SIGTERM at (lines)', 'exit status', 'signal → exit', 'emitted (witness)', 'lines in the file', 'lost', 'duplicated', 'gaps in the witness'],
  r.runs.map((x) => [
    x.run,
    fmt(x.signalAt),
    x.exitCode ?? '–',
    `${fmt(x.exitMs)} ms`,
    fmt(x.emitted) + (x.sourceFinished ? ' (source done)' : ''),
    fmt(x.fileLines),
    `**${fmt(x.lost)}**`,
    fmt(x.duplicated),
    fmt(x.witnessGaps),
  ]),
)}

Signal to exit: median ${fmt(ms[Math.floor(ms.length / 2)] ?? 0)} ms, max ${fmt(ms.at(-1) ?? 0)} ms; **${fmt(lost)} events lost** over ${r.runs.length} run${r.runs.length === 1 ? '' : 's'}.
`;
}
