import { readFileSync } from 'node:fs';

/**
 * The local addresses the kernel has sockets bound to on `port`, read from
 * Linux's /proc/net tables: listening TCP sockets, or UDP sockets. It shows
 * what a listener really bound (127.0.0.1, or 0.0.0.0 for every interface),
 * which a client connecting over loopback cannot tell apart.
 */
export function boundAddresses(port: number, protocol: 'tcp' | 'udp'): string[] {
  const found: string[] = [];
  for (const table of [protocol, `${protocol}6`]) {
    for (const line of readFileSync(`/proc/net/${table}`, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (local === undefined) continue;
      const [address, hexPort] = local.split(':');
      if (parseInt(hexPort, 16) !== port) continue;
      if (protocol === 'tcp' && state !== '0A') continue; // TCP_LISTEN; others are connections on that port
      found.push(address.length === 8 ? ipv4(address) : ipv6(address));
    }
  }
  return found;
}

/** /proc/net writes an IPv4 address as one 32-bit word in host (little-endian) order. */
function ipv4(hex: string): string {
  return [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16)).join('.');
}

/** An IPv6 address as four such words; written out in full (no :: shortening). */
function ipv6(hex: string): string {
  const bytes: string[] = [];
  for (let word = 0; word < 4; word++) for (const i of [6, 4, 2, 0]) bytes.push(hex.slice(word * 8 + i, word * 8 + i + 2));
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i] + bytes[i + 1]).toLowerCase());
  return groups.join(':');
}
