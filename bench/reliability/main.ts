/**
 * `npm run reliability [-- SECTION...]`: runs the sections of the
 * reliability report (all of them by default, in the report's order) and
 * writes docs/reliability.md (RELIABILITY_OUT) after each one, with the
 * soak's RSS plot beside it.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { REPO, fmt } from './common';
import { runFuzz } from './fuzz';
import { runKill9 } from './kill9';
import { linePlotPng } from './plot';
import { SECTIONS, failedSection, fuzzSection, kill9Section, shutdownSection, soakSection, writeSection, type RunFacts, type Section } from './report';
import { runShutdown } from './shutdown';
import { runSoak, type SoakResult } from './soak';

const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

function machine(): string {
  const c = cpus();
  return `${c.length} cores (${c[0]?.model.trim() ?? 'unknown CPU'}), ${fmt(totalmem() / 2 ** 30, 1)} GiB, Linux ${release()}, Node ${process.version}`;
}

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench', 'bin'], { cwd: REPO, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head} with uncommitted changes` : head;
  } catch {
    return 'unknown';
  }
}

/** The command as it was typed: the RELIABILITY_* settings, then npm run (or node) with the sections named. */
function command(sections: string[]): string {
  const env = Object.keys(process.env)
    .filter((k) => k.startsWith('RELIABILITY_'))
    .sort()
    .map((k) => `${k}=${process.env[k]}`);
  const viaNpm = process.env.npm_lifecycle_event === 'reliability';
  const run = viaNpm
    ? `npm run reliability${sections.length ? ` -- ${sections.join(' ')}` : ''}`
    : `node dist/bench/reliability/main.js${sections.length ? ` ${sections.join(' ')}` : ''}`;
  return [...env, run].join(' ');
}

function soakPng(r: SoakResult): Buffer {
  return linePlotPng({
    title: `RSS of eddy: ${fmt(r.rate)} events/s, peer reset every ${fmt(r.disconnectEverySecs)} s`,
    xLabel: 'minutes',
    yLabel: 'RSS MB',
    points: r.samples.map((s) => [s.t / 60, s.rssBytes / 1048576]),
    markers: r.disconnects.map((t) => t / 60),
    markerLabel: 'peer disconnects',
  });
}

export async function main(argv: string[]): Promise<number> {
  const unknown = argv.filter((a) => !(SECTIONS as readonly string[]).includes(a));
  if (unknown.length) {
    process.stderr.write(`unknown section(s): ${unknown.join(', ')} (sections: ${SECTIONS.join(', ')})\n`);
    return 2;
  }
  const chosen = argv.length ? SECTIONS.filter((s) => argv.includes(s)) : [...SECTIONS];
  const out = resolve(process.env.RELIABILITY_OUT ?? join(REPO, 'docs', 'reliability.md'));
  const pngName = `${basename(out, '.md')}-rss.png`;
  const cmd = command(argv);
  let failures = 0;
  for (const section of chosen) {
    log(`${section}: starting`);
    const started = performance.now();
    const facts = (): RunFacts => ({
      date: new Date().toISOString().replace('T', ' ').slice(0, 16) + ' UTC',
      command: cmd,
      machine: machine(),
      commit: commit(),
      seconds: (performance.now() - started) / 1000,
      loadBefore,
    });
    const loadBefore = loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ');
    try {
      const body = await runSection(section, facts, out, pngName);
      writeSection(out, section, body);
      log(`${section}: done, written to ${out}`);
    } catch (err) {
      failures++;
      log(`${section}: FAILED: ${(err as Error).stack ?? String(err)}`);
      writeSection(out, section, failedSection(section, facts(), err as Error));
    }
  }
  return failures ? 1 : 0;
}

async function runSection(section: Section, facts: () => RunFacts, out: string, pngName: string): Promise<string> {
  switch (section) {
    case 'kill9': {
      const r = await runKill9(log);
      return kill9Section(r, facts());
    }
    case 'fuzz': {
      const r = await runFuzz(log);
      return fuzzSection(r, facts());
    }
    case 'soak': {
      const r = await runSoak(log);
      writeFileSync(join(dirname(out), pngName), soakPng(r));
      return soakSection(r, facts(), pngName);
    }
    case 'shutdown': {
      const r = await runShutdown(log);
      return shutdownSection(r, facts());
    }
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
