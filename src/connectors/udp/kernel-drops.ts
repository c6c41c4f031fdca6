import { readFileSync } from 'node:fs';
import { BlockList } from 'node:net';
import { endianness } from 'node:os';

/**
 * The datagrams the kernel dropped for one bound UDP socket because its
 * receive buffer was full: the `drops` column of Linux's /proc/net/udp (or
 * udp6), the line whose local address and port are the socket's. Node reads
 * from a socket only when its event loop gets to it, so a burst larger than
 * the buffer is lost there, before eddy sees it; this makes the loss
 * visible. Read when asked (a metrics report or scrape), not on a timer.
 * Elsewhere than Linux the file is absent and the count unknown (undefined).
 */
export class KernelDrops {
  private readonly table: string;
  /** our local address, in a form that compares equal to any spelling of it */
  private readonly local = new BlockList();
  private readonly port: string;

  constructor(family: 'IPv4' | 'IPv6', address: string, port: number) {
    this.table = family === 'IPv6' ? '/proc/net/udp6' : '/proc/net/udp';
    this.local.addAddress(address, family === 'IPv6' ? 'ipv6' : 'ipv4');
    this.port = port.toString(16).toUpperCase().padStart(4, '0');
  }

  /** The socket's drops so far (cumulative, since it was opened); undefined when the system does not say. */
  read(): number | undefined {
    let text: string;
    try {
      text = readFileSync(this.table, 'latin1');
    } catch {
      return undefined;
    }
    // "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops"
    for (const line of text.split('\n').slice(1)) {
      const columns = line.trim().split(/\s+/);
      if (columns.length < 13) continue;
      const [address, port] = columns[1].split(':');
      if (port !== this.port) continue;
      const family = address.length === 32 ? 'ipv6' : 'ipv4';
      if (this.local.check(procAddress(address), family)) return Number(columns[12]);
    }
    return undefined;
  }
}

/**
 * An address as /proc/net/udp writes it, in text: hex of 32-bit words, each
 * in the host's byte order (one word for IPv4, four for IPv6).
 */
function procAddress(hex: string): string {
  const bytes: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = Buffer.from(hex.slice(w, w + 8), 'hex');
    if (endianness() === 'LE') word.reverse();
    bytes.push(...word);
  }
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return groups.join(':');
}
