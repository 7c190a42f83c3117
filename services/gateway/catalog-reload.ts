// Reloading the catalog file without a restart (docs/money.md, "Reloading the catalog"): on
// SIGHUP and when the file changes. A file that would not start the gateway is refused with one
// error line and the catalog in force stays; a valid one replaces it for the requests that
// resolve a model after it (a call already prepared keeps the prices it froze).
//
// The `providers` map is not reloaded: its adapters hold connections and keys made at start-up,
// and a reload that rebuilt them would have to drain the calls in flight on the old ones. A file
// whose `providers` differ from those in force is refused, naming the restart it needs.

import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { CatalogFileError, loadCatalog, type Catalog } from '../../catalog/catalog';
import { metrics } from '../../lib/metrics';
import { providerServes, type Provider } from '../../providers/registry';

export type ReloadTrigger = 'signal' | 'file';
export type ReloadOutcome = 'applied' | 'refused' | 'unchanged';

/** Every profile's provider must speak the profile's wire: found when the file is loaded, not at the first call. */
export function checkProfilesServed(catalog: Catalog, providers: ReadonlyMap<string, Provider>): void {
  for (const model of catalog.file.models) {
    for (const profile of model.profiles) {
      for (const { provider: name } of profile.upstreams) {
        const provider = providers.get(name);
        if (provider && !providerServes(provider, profile.wire_format)) {
          throw new CatalogFileError(`models[${model.id}]: profile ${profile.profile_id} is ${profile.wire_format}, which provider "${name}" does not serve`);
        }
      }
    }
  }
}

/** Editors write a file in several steps (truncate, write, rename): one reload after the last. */
const DEFAULT_DEBOUNCE_MS = 150;

export class CatalogReloader {
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;

  constructor(private readonly deps: {
    catalog: Catalog;
    path: string;
    providers: ReadonlyMap<string, Provider>;
    logger: Logger;
    debounceMs?: number;
  }) {}

  /** Loads the file again and puts it in force if it is valid and differs from the one in force. */
  reload(trigger: ReloadTrigger): ReloadOutcome {
    const { catalog, path, providers, logger } = this.deps;
    const before = catalog.loaded.version;
    try {
      const next = loadCatalog(path, { now: catalog.now });
      if (next.loaded.version === before) {
        metrics.catalogReload('unchanged');
        return 'unchanged';
      }
      if (!isDeepStrictEqual(next.file.providers, catalog.file.providers)) {
        throw new CatalogFileError(`catalog file ${path}: the providers map differs from the one in force; provider changes need a restart`);
      }
      checkProfilesServed(next, providers);
      catalog.replace(next);
      metrics.catalogReload('applied');
      logger.info({ file: path, trigger, version: next.loaded.version, previous: before, models: next.file.models.length }, 'catalog reloaded');
      return 'applied';
    } catch (error) {
      metrics.catalogReload('refused');
      logger.error({ file: path, trigger, version: before }, `catalog reload refused, the catalog in force stays (version ${before}): ${(error as Error).message}`);
      return 'refused';
    }
  }

  /**
   * Reloads when the file changes. The directory is watched, not the file: an editor that saves
   * by writing a new file and renaming it over the old one leaves a watch on the file pointing
   * at the old inode. A change the watch cannot see (the target of a symlink in another
   * directory, written in place) takes a SIGHUP.
   */
  watch(): void {
    const { path, logger } = this.deps;
    const name = basename(path);
    this.watcher = watch(dirname(path), (_event, changed) => {
      // `..data`: Kubernetes swaps a mounted ConfigMap's files through that symlink.
      if (changed !== null && changed !== name && !changed.startsWith('..')) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.reload('file'), this.deps.debounceMs ?? DEFAULT_DEBOUNCE_MS);
    });
    this.watcher.on('error', (error) => logger.warn({ err: error, file: path }, 'catalog file watch failed: reloads on SIGHUP only'));
  }

  close(): void {
    clearTimeout(this.timer);
    this.watcher?.close();
  }
}
