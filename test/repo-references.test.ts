// The repository stands alone. Its files never point at the documents the project was built
// from (a user of the repository does not have them), every relative link in its Markdown leads
// to a file (and a heading) that exists, and every docs/<page>.md a file names exists.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');
/** Installed, built or generated: not the repository's own text. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'data', '.data', 'coverage', '.git']);

/** The input documents, spelt in parts so that this file does not name them itself. */
const INPUTS = ['SPEC', 'DESIGN', 'STYLE'];
const FORBIDDEN = new RegExp([
  `\\b(${INPUTS.join('|')})\\.md\\b`,
  `\\.\\./shared\\b`,
  `\\b(${INPUTS.join('|')})(:| §| note\\b)`,
].join('|'));

function isFile(path: string): boolean {
  try {
    return statSync(join(ROOT, path)).isFile();
  } catch {
    return false;
  }
}

function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (SKIPPED_DIRS.has(entry.name)) return [];
    if (entry.isDirectory()) return walk(path);
    return isFile(path) ? [path] : [];
  });
}

/** Tracked files and new ones not ignored (so a file is checked before it is committed); a walk outside git. */
function repoFiles(): string[] {
  let listed: string;
  try {
    listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return walk('');
  }
  const files = listed.split('\0').filter((path) => path !== '' && !SKIPPED_DIRS.has(path.split('/')[0]!) && isFile(path));
  return [...new Set(files)].sort();
}

/** Text files only: a NUL byte marks a binary one. */
function textOf(path: string): string | undefined {
  const bytes = readFileSync(join(ROOT, path));
  return bytes.includes(0) ? undefined : bytes.toString('utf8');
}

const files = repoFiles();
const texts = new Map(files.flatMap((path) => {
  const text = textOf(path);
  return text === undefined ? [] : [[path, text] as const];
}));

/** Each line outside fenced code blocks, with its number. */
function proseLines(text: string): Array<{ line: string; number: number }> {
  const lines: Array<{ line: string; number: number }> = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, index) => {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker) {
      if (fence === undefined) fence = marker;
      else if (fence === marker) fence = undefined;
      return;
    }
    if (fence === undefined) lines.push({ line, number: index + 1 });
  });
  return lines;
}

/** The anchor GitHub gives a heading: rendered text, lower case, punctuation dropped, spaces as hyphens. */
function headingSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
  return rendered.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

function anchorsOf(path: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { line } of proseLines(texts.get(path) ?? '')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Inline links and images of a Markdown text, code spans and fenced blocks aside. */
function linksOf(text: string): Array<{ target: string; number: number }> {
  const links: Array<{ target: string; number: number }> = [];
  for (const { line, number } of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)) links.push({ target: match[1]!, number });
  }
  return links;
}

function brokenLink(from: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // http:, https:, mailto:
  const hash = target.indexOf('#');
  const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
  const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const absolute = pathPart === '' ? join(ROOT, from) : resolve(ROOT, dirname(from), pathPart);
  const inRepo = relative(ROOT, absolute);
  if (inRepo.startsWith('..')) return 'points outside the repository';
  if (!existsSync(absolute)) return 'no such file';
  if (anchor !== undefined && inRepo.endsWith('.md') && !anchorsOf(inRepo).has(anchor)) return `no heading #${anchor} in ${inRepo}`;
  return undefined;
}

describe('the repository stands alone', () => {
  it('lists the repository files (the check below has something to look at)', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'lib/errors.ts']));
  });

  it('when any file names the input documents or their folder, then it is listed here', () => {
    const offenders: string[] = [];
    for (const [path, text] of texts) {
      text.split('\n').forEach((line, index) => {
        if (FORBIDDEN.test(line)) offenders.push(`${path}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });

  it('when a Markdown file links to a relative path or an anchor, then the file and the heading exist', () => {
    const markdown = [...texts.keys()].filter((path) => path.endsWith('.md'));
    expect(markdown).toEqual(expect.arrayContaining(['README.md', 'docs/api.md']));
    const broken: string[] = [];
    for (const path of markdown) {
      for (const { target, number } of linksOf(texts.get(path)!)) {
        const problem = brokenLink(path, target);
        if (problem) broken.push(`${path}:${number}: (${target}) ${problem}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('when any file names a page docs/<page>.md, then the page exists', () => {
    const missing: string[] = [];
    for (const [path, text] of texts) {
      text.split('\n').forEach((line, index) => {
        for (const match of line.matchAll(/(?<![\w./-])docs\/([\w.-]+\.md)\b/g)) {
          if (!existsSync(join(ROOT, 'docs', match[1]!))) missing.push(`${path}:${index + 1}: docs/${match[1]}`);
        }
      });
    }
    expect(missing).toEqual([]);
  });

  it('when any file cites an entry of docs/benchmarks.md by its day (and part of the day), then the page has that entry', () => {
    // The page's entries each begin with their day, then the part of it: "2026-11-27, night (16:34–18:00 UTC), …".
    const entries = new Set<string>();
    for (const { line } of proseLines(texts.get('docs/benchmarks.md') ?? '')) {
      const entry = /^(\d{4}-\d{2}-\d{2})(?:, ([a-z]+(?: [a-z]+)?) \()?/.exec(line);
      if (entry) entries.add(entry[1]!).add(`${entry[1]}, ${entry[2] ?? ''}`);
    }
    expect(entries.size).toBeGreaterThan(0);
    const missing: string[] = [];
    for (const [path, text] of texts) {
      // "benchmarks.md, 2026-11-27, night)", "benchmarks.md, 2026-11-28)", "…; 2026-11-26, evening)".
      for (const citation of text.replace(/\s+/g, ' ').matchAll(/benchmarks\.md, ((?:\d{4}-\d{2}-\d{2},? ?[a-z ]*[;)] ?)+)/g)) {
        for (const cited of citation[1]!.split(/[;)]/).map((part) => part.trim()).filter((part) => part !== '')) {
          const [, day, part] = /^(\d{4}-\d{2}-\d{2}),? ?([a-z ]*)$/.exec(cited) ?? [];
          if (!entries.has(part ? `${day}, ${part}` : day!)) missing.push(`${path}: ${cited}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('headings get the anchors GitHub gives them', () => {
    expect(headingSlug('The Dapr outbox: kept until the ledger confirms')).toBe('the-dapr-outbox-kept-until-the-ledger-confirms');
    expect(headingSlug('UNKNOWN_IMAGE_V1')).toBe('unknown_image_v1');
    expect(headingSlug('Member / business (OAuth)')).toBe('member--business-oauth');
    expect(headingSlug('Agent Run (capability `gates`)')).toBe('agent-run-capability-gates');
  });
});
