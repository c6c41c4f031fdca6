import { expect } from 'chai';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installMissingPeers, peerPlan, type PeerHost } from './peers';

/**
 * A PATH of fakes: the few programs scripts/install-peers itself runs, and an
 * apt-get that records its arguments and "installs" each package as a script
 * in the same directory, so the install runs end to end without touching
 * this machine's packages.
 */
function fakeHost(root: boolean): { host: PeerHost; bin: string; output: () => string; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'eddy-peers-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const tool of ['bash', 'grep', 'id', 'flock']) symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
  const apt = `#!/usr/bin/bash
echo "$*" >> ${dir}/apt-get.log
[ "$1" = install ] || exit 0
for p in "$@"; do
  case "$p" in
    -*|install) ;;
    netcat-openbsd) printf '#!/usr/bin/bash\necho OpenBSD netcat\n' > ${bin}/nc; /usr/bin/chmod +x ${bin}/nc ;;
    *) printf '#!/usr/bin/bash\n' > ${bin}/$p; /usr/bin/chmod +x ${bin}/$p ;;
  esac
done`;
  writeFileSync(join(bin, 'apt-get'), `${apt}\n`);
  chmodSync(join(bin, 'apt-get'), 0o755);
  // a Python peer that is there: only the Debian packages are under test
  mkdirSync(join(dir, 'python/bin'), { recursive: true });
  writeFileSync(join(dir, 'python/bin/python'), '#!/usr/bin/bash\nexit 0\n');
  chmodSync(join(dir, 'python/bin/python'), 0o755);
  let written = '';
  const host: PeerHost = { env: { PATH: bin, EDDY_PYTHON_PEERS: join(dir, 'python') }, root, write: (text) => (written += text) };
  return { host, bin, output: () => written, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

describe("npm test's setup installs the missing test peers (scripts/install-peers)", function () {
  this.timeout(30_000);

  it('installs nothing, and says nothing, when nothing is missing', () => {
    expect(peerPlan([], true, true)).to.equal(undefined);
  });

  it('installs as root with apt-get, saying what', () => {
    expect(peerPlan(['netcat-openbsd', 'wrk'], true, true)).to.deep.equal({
      install: true,
      line: 'peers: installing netcat-openbsd, wrk (scripts/install-peers, with apt-get as root)',
    });
  });

  it('installs nothing when not root, or without apt-get, and says why and what to run', () => {
    expect(peerPlan(['curl'], false, true)).to.deep.equal({
      install: false,
      line: 'peers: curl missing and not installed (not root): the tests that need them fail; run scripts/install-peers as root',
    });
    expect(peerPlan(['curl'], true, false)?.line).to.equal(
      'peers: curl missing and not installed (there is no apt-get here): the tests that need them fail; run scripts/install-peers as root',
    );
  });

  it('installs the missing peers with apt-get, after which none is missing', async () => {
    const fake = fakeHost(true);
    try {
      await installMissingPeers(fake.host);
      const log = readFileSync(join(fake.host.env.EDDY_PYTHON_PEERS!, '../apt-get.log'), 'utf8');
      expect(log).to.match(/^install -y -qq --no-install-recommends netcat-openbsd curl wrk tmux\b/m);
      expect(fake.output()).to.match(/^peers: installing netcat-openbsd, curl, wrk, tmux\b.*\(scripts\/install-peers, with apt-get as root\)$/m);
      for (const program of ['nc', 'curl', 'wrk', 'tmux']) expect(existsSync(join(fake.bin, program)), program).to.equal(true);
      // a second run finds nothing to do for them
      const before = fake.output().length;
      await installMissingPeers(fake.host);
      expect(fake.output().slice(before)).not.to.match(/netcat-openbsd|curl|wrk|tmux/);
    } finally {
      fake.dispose();
    }
  });

  it('when not root, installs nothing and says which peers are missing', async () => {
    const fake = fakeHost(false);
    try {
      await installMissingPeers(fake.host);
      expect(existsSync(join(fake.host.env.EDDY_PYTHON_PEERS!, '../apt-get.log'))).to.equal(false);
      expect(fake.output()).to.match(/^peers: netcat-openbsd, curl, wrk, tmux\b.* missing and not installed \(not root\)/m);
    } finally {
      fake.dispose();
    }
  });
});
