/**
 * `eddy server run -f FILE --watch`: reloads the config files when one of
 * them changes, and on SIGHUP (with or without --watch), through
 * ConfigReloader (reload.ts). Files are polled (fs.watchFile, every 250 ms)
 * rather than watched by inode: editors and `kubectl` config maps replace a
 * file by renaming a new one over it, which an inode watch loses.
 */
import { unwatchFile, watchFile, type Stats } from 'node:fs';
import type { Logger } from '../core/logger';
import type { ConfigReloader } from './reload';

/** Changes closer together than this make one reload (an editor writing a file in several steps). */
const SETTLE_MS = 200;
const POLL_MS = 250;

export class ConfigWatcher {
  private timer?: NodeJS.Timeout;
  private readonly onSignal = () => this.trigger('SIGHUP');
  private readonly listeners = new Map<string, (now: Stats, before: Stats) => void>();

  constructor(
    private readonly reloader: ConfigReloader,
    private readonly paths: string[],
    private readonly logger: Logger,
  ) {}

  /** Reloads on SIGHUP, and with `watch` when a file changes. */
  start(watch: boolean): this {
    process.on('SIGHUP', this.onSignal);
    if (!watch) return this;
    for (const path of this.paths) {
      const listener = (now: Stats, before: Stats) => {
        if (now.mtimeMs !== before.mtimeMs || now.size !== before.size || now.ino !== before.ino) this.trigger(`${path} changed`);
      };
      this.listeners.set(path, listener);
      watchFile(path, { interval: POLL_MS, persistent: false }, listener);
    }
    return this;
  }

  stop(): void {
    process.off('SIGHUP', this.onSignal);
    for (const [path, listener] of this.listeners) unwatchFile(path, listener);
    this.listeners.clear();
    clearTimeout(this.timer);
  }

  private trigger(why: string): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.logger.info(`reloading the config files: ${why}`);
      // a refused reload is logged by the reloader; the server runs on as it was
      this.reloader.reload().catch(() => undefined);
    }, SETTLE_MS);
  }
}
