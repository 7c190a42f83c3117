// Byte-pair merging of one piece of text in O(n log n): the pair of adjacent parts with the
// lowest rank is merged first, the leftmost among equal ranks, until no adjacent pair has a rank.
// That is the rule of OpenAI's tiktoken and of gpt-tokenizer, whose own loop looks for the lowest
// pair again over the whole piece after each merge: O(n²), so one long piece (a run of letters
// without a space, a CJK sentence without punctuation, a run of spaces) took 12 s for 100,000
// characters and 73 s for 100,000 CJK characters, all of it on the event loop. Here the pairs
// wait in a heap, and a merge recomputes only the two pairs it changed.

/** The parts' start offsets in `piece` (the last entry is its length): each part one token. */
export function mergedParts(piece: Uint8Array, rankOf: (bytes: Uint8Array) => number | undefined): number[] {
  const n = piece.length;
  // The parts as a list of start offsets: next[s] is the start of the part after the one at s.
  const next = new Int32Array(n + 1);
  const prev = new Int32Array(n + 1);
  for (let s = 0; s <= n; s++) {
    next[s] = s + 1;
    prev[s] = s - 1;
  }
  // A pair is named by its left part's start; its rank changes (version++) when a merge touches it.
  const version = new Int32Array(n + 1);
  const heap = new PairHeap();
  const rankAt = (s: number): number | undefined => {
    const end = next[s];
    return end < n ? rankOf(piece.subarray(s, next[end])) : undefined;
  };
  const push = (s: number) => {
    version[s]++;
    const rank = rankAt(s);
    if (rank !== undefined) heap.push(rank, s, version[s]);
  };
  for (let s = 0; s < n - 1; s++) push(s);
  for (;;) {
    const top = heap.pop();
    if (!top) break;
    const [, s, seen] = top;
    if (seen !== version[s]) continue;
    // Merge the part at s with the one after it.
    const gone = next[s];
    next[s] = next[gone];
    if (next[s] <= n) prev[next[s]] = s;
    version[gone]++;
    push(s);
    if (s > 0) push(prev[s]);
  }
  const starts: number[] = [];
  for (let s = 0; s <= n; s = next[s]) starts.push(s);
  return starts;
}

/** A binary heap of pairs, lowest rank first, then leftmost. */
class PairHeap {
  private readonly ranks: number[] = [];
  private readonly starts: number[] = [];
  private readonly versions: number[] = [];

  push(rank: number, start: number, version: number): void {
    let i = this.ranks.length;
    this.ranks.push(rank);
    this.starts.push(start);
    this.versions.push(version);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): [number, number, number] | undefined {
    if (this.ranks.length === 0) return undefined;
    const top: [number, number, number] = [this.ranks[0], this.starts[0], this.versions[0]];
    const last = this.ranks.length - 1;
    this.swap(0, last);
    this.ranks.pop();
    this.starts.pop();
    this.versions.pop();
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < this.ranks.length && this.before(left, least)) least = left;
      if (right < this.ranks.length && this.before(right, least)) least = right;
      if (least === i) break;
      this.swap(i, least);
      i = least;
    }
    return top;
  }

  private before(a: number, b: number): boolean {
    return this.ranks[a] < this.ranks[b] || (this.ranks[a] === this.ranks[b] && this.starts[a] < this.starts[b]);
  }

  private swap(a: number, b: number): void {
    [this.ranks[a], this.ranks[b]] = [this.ranks[b], this.ranks[a]];
    [this.starts[a], this.starts[b]] = [this.starts[b], this.starts[a]];
    [this.versions[a], this.versions[b]] = [this.versions[b], this.versions[a]];
  }
}
