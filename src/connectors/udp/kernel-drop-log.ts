/** How often the kernel's count is read for the log (a read of /proc/net/udp, the kernel's table: no disk). */
export const KERNEL_DROPS_POLL_MS = 5_000;
/** After the first line, at most one line this often, with the count since the last. */
export const KERNEL_DROPS_LOG_EVERY_MS = 60_000;

/**
 * Turns readings of a socket's cumulative kernel drop count (`KernelDrops`)
 * into WARN lines: one as soon as the count first grows, then at most one a
 * minute, each with the drops since the line before. The count is in
 * `/metrics`, `/status` and `eddy status` too; the log says that it started,
 * which a user who reads no metrics would otherwise never learn.
 */
export class KernelDropLog {
  /** the count the last line reported up to (0: the socket's count starts at its opening) */
  private reported = 0;
  /** when the last line was written (scheduler ms); none yet */
  private lastLineAt: number | undefined;

  constructor(
    private readonly url: string,
    private readonly warn: (line: string) => void,
    private readonly everyMs = KERNEL_DROPS_LOG_EVERY_MS,
  ) {}

  /** One reading: `total` the socket's drops so far (undefined: the system does not say), `now` in ms. */
  observe(total: number | undefined, now: number): void {
    if (total === undefined || total <= this.reported) return;
    if (this.lastLineAt !== undefined && now - this.lastLineAt < this.everyMs) return;
    const since = total - this.reported;
    const first = this.lastLineAt === undefined;
    this.warn(
      first
        ? `udp onramp ${this.url}: the kernel dropped ${since} datagrams before eddy read them (a full socket receive buffer; receive_buffer_size asks for a larger one)`
        : `udp onramp ${this.url}: the kernel dropped ${since} more datagrams since the last line (${total} since the socket opened)`,
    );
    this.reported = total;
    this.lastLineAt = now;
  }
}
