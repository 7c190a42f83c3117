// A Dockerfile read into its stages and instructions, for topology/manifests.test.ts. Written here
// rather than taken from a package: node_modules has no Dockerfile parser, and the subset this
// repository's Dockerfile uses is small: comments, parser directives, backslash continuations,
// `--flag=value` options, and the JSON ("exec") or plain ("shell") form of the arguments.
// No variable expansion (ARG/ENV values are kept as written).

export interface Instruction {
  /** Upper case: FROM, RUN, COPY, … */
  keyword: string;
  /** `--name=value` options before the arguments (`--from=build` → { from: 'build' }). */
  flags: Record<string, string>;
  /** The arguments: the JSON array's items (exec form) or the words of the rest of the line (shell form). */
  args: string[];
  /** The arguments as written, after the options. */
  text: string;
  /** True when the arguments were a JSON array. */
  exec: boolean;
  /** 1-based line where the instruction starts. */
  line: number;
}

export interface Stage {
  /** The image of the FROM line. */
  base: string;
  /** `AS name`, if given. */
  name?: string;
  instructions: Instruction[];
}

const FLAG = /^--([a-z-]+)(?:=(\S*))?\s*/;

export function parseDockerfile(text: string): { stages: Stage[]; errors: string[] } {
  const errors: string[] = [];
  const instructions: Instruction[] = [];
  const lines = text.split('\n');
  let pending = '';
  let startLine = 0;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    const trimmed = raw.trim();
    // Comments (and parser directives, which look like comments) count only at the start of a line.
    if (trimmed.startsWith('#') || (trimmed === '' && pending === '')) continue;
    if (pending === '') startLine = i + 1;
    const continued = /\\\s*$/.test(raw);
    pending += (pending ? ' ' : '') + (continued ? raw.replace(/\\\s*$/, '') : raw).trim();
    if (continued && i < lines.length - 1) continue;
    const instruction = parseInstruction(pending.trim(), startLine, errors);
    if (instruction) instructions.push(instruction);
    pending = '';
  }
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const [base = '', as, name] = ins.args;
      if (as !== undefined && (as.toUpperCase() !== 'AS' || !name)) errors.push(`line ${ins.line}: FROM ${ins.text}`);
      stages.push({ base, name, instructions: [] });
    } else if (stages.length === 0) {
      if (ins.keyword !== 'ARG') errors.push(`line ${ins.line}: ${ins.keyword} before the first FROM`);
    } else {
      stages.at(-1)!.instructions.push(ins);
    }
  }
  if (stages.length === 0) errors.push('no FROM');
  return { stages, errors };
}

function parseInstruction(source: string, line: number, errors: string[]): Instruction | undefined {
  const match = /^([A-Za-z]+)\s*(.*)$/.exec(source);
  if (!match) {
    errors.push(`line ${line}: not an instruction: ${source}`);
    return undefined;
  }
  const keyword = match[1]!.toUpperCase();
  let rest = match[2]!;
  const flags: Record<string, string> = {};
  for (let flag = FLAG.exec(rest); flag; flag = FLAG.exec(rest)) {
    flags[flag[1]!] = flag[2] ?? 'true';
    rest = rest.slice(flag[0].length);
  }
  // HEALTHCHECK's own command starts after its keyword CMD (or is NONE).
  let text = rest.trim();
  let body = text;
  if (keyword === 'HEALTHCHECK' && /^CMD\s/i.test(body)) body = body.replace(/^CMD\s+/i, '');
  if (body.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(body);
      if (Array.isArray(parsed) && parsed.every((a) => typeof a === 'string')) return { keyword, flags, args: parsed, text, exec: true, line };
    } catch {
      // Not JSON: Docker runs it in the shell form too.
    }
  }
  text = text.replace(/\s+/g, ' ');
  return { keyword, flags, args: body.split(/\s+/).filter(Boolean), text, exec: false, line };
}

/** The instructions of a stage with this keyword. */
export const instructionsOf = (stage: Stage | undefined, keyword: string): Instruction[] =>
  (stage?.instructions ?? []).filter((i) => i.keyword === keyword);

/** COPY/ADD sources and destination: every argument but the last is a source. */
export function copyParts(ins: Instruction): { sources: string[]; destination: string } {
  return { sources: ins.args.slice(0, -1), destination: ins.args.at(-1) ?? '' };
}
