// Journal actor: an append-only list in pages of JOURNAL_PAGE_SIZE entries (`page:<n>`), its
// length under `length`, and each entry's position under `id:<id>` so a repeated append (a
// retry) is recognised. Reads go newest first, page by page.

import { GatewayError } from '../../lib/errors';
import type { ActorContext, ActorInstance } from '../runtime/port';
import { StateRecord, StateRecords } from '../runtime/state-record';
import {
  JOURNAL_ACTOR_TYPE,
  JOURNAL_ARGS,
  JOURNAL_METHODS,
  JOURNAL_PAGE_SIZE,
  MAX_JOURNAL_ENTRY_BYTES,
  MAX_JOURNAL_SCAN,
  passes,
  type AppendRequest,
  type JournalApi,
  type JournalEntry,
  type JournalPage,
  type ReadRequest,
} from './JournalInterface';

export class Journal implements JournalApi, ActorInstance {
  static readonly actorType = JOURNAL_ACTOR_TYPE;
  static readonly methods = JOURNAL_METHODS;
  static readonly args = JOURNAL_ARGS;

  private readonly length: StateRecord<number>;
  private readonly pages: StateRecords<JournalEntry[]>;
  private readonly positions: StateRecords<number>;

  constructor(ctx: ActorContext) {
    this.length = new StateRecord(ctx.state, 'length', 'empty journal');
    this.pages = new StateRecords(ctx.state, 'page:');
    this.positions = new StateRecords(ctx.state, 'id:');
  }

  async append(request: AppendRequest): Promise<{ position: number; added: boolean }> {
    const earlier = await this.positions.get(request.id);
    if (earlier !== undefined) return { position: earlier, added: false };
    if (JSON.stringify(request.entry).length > MAX_JOURNAL_ENTRY_BYTES) {
      throw new GatewayError('invalid_request', `a journal entry is at most ${MAX_JOURNAL_ENTRY_BYTES} bytes`, { param: 'entry' });
    }
    const position = (await this.length.load()) ?? 0;
    const pageNo = Math.floor(position / JOURNAL_PAGE_SIZE);
    const page = (await this.pages.get(String(pageNo))) ?? [];
    page.push(request.entry);
    this.pages.set(String(pageNo), page);
    this.positions.set(request.id, position);
    this.length.save(position + 1);
    return { position, added: true };
  }

  async read(request: ReadRequest): Promise<JournalPage> {
    const total = (await this.length.load()) ?? 0;
    const items: JournalPage['items'] = [];
    const text = request.match?.text.toLowerCase();
    let position = Math.min(request.before ?? total, total) - 1;
    let scanned = 0;
    let page: JournalEntry[] | undefined;
    let pageNo = -1;
    while (position >= 0 && items.length < request.limit && scanned < MAX_JOURNAL_SCAN) {
      const wanted = Math.floor(position / JOURNAL_PAGE_SIZE);
      if (wanted !== pageNo) {
        pageNo = wanted;
        page = (await this.pages.get(String(pageNo))) ?? [];
      }
      const entry = page?.[position % JOURNAL_PAGE_SIZE];
      if (entry && (text === undefined || matches(entry, request.match!.field, text)) && passes(entry, request)) items.push({ position, entry });
      position -= 1;
      scanned += 1;
    }
    return { items, next: position >= 0 ? position + 1 : null, total };
  }

  async onReminder(): Promise<void> {}
}

function matches(entry: JournalEntry, field: string, text: string): boolean {
  const value = entry[field];
  return typeof value === 'string' && value.toLowerCase().includes(text);
}
