// A parser for Java .properties text, the format of Kafka's server.properties. It follows java.util.Properties:
// lines starting with # or ! (after whitespace) are comments; a key ends at the first unescaped '=', ':' or
// whitespace; a line ending in an odd number of backslashes continues on the next line, whose leading
// whitespace is dropped; \t \n \r \f and \uXXXX are escapes and a backslash before any other character keeps
// that character. The last occurrence of a key wins. One deliberate difference: text is read as UTF-8 rather
// than ISO-8859-1, which changes nothing for ASCII files and keeps non-ASCII values readable.
// formatProperties writes the same format back, escaping what the parser would otherwise read differently.

export class PropertiesSyntaxError extends Error {
  override name = 'PropertiesSyntaxError';
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

const WHITESPACE = new Set([' ', '\t', '\f']);

interface LogicalLine {
  readonly text: string;
  /** 1-based number of the physical line where the logical line starts. */
  readonly line: number;
}

function endsWithContinuation(text: string): boolean {
  let backslashes = 0;
  for (let i = text.length - 1; i >= 0 && text[i] === '\\'; i--) backslashes++;
  return backslashes % 2 === 1;
}

function skipWhitespace(text: string, from: number): number {
  let i = from;
  while (i < text.length && WHITESPACE.has(text[i] as string)) i++;
  return i;
}

/** Joins continued lines and drops blank and comment lines. */
function logicalLines(source: string): LogicalLine[] {
  // A byte order mark left by an editor would otherwise become part of the first key.
  const text = source.startsWith('\uFEFF') ? source.slice(1) : source;
  const physical = text.split(/\r\n|\r|\n/);
  const lines: LogicalLine[] = [];
  for (let i = 0; i < physical.length; i++) {
    const start = i + 1;
    let text = (physical[i] as string).slice(skipWhitespace(physical[i] as string, 0));
    if (text.length === 0 || text[0] === '#' || text[0] === '!') continue;
    while (endsWithContinuation(text)) {
      text = text.slice(0, -1);
      i++;
      if (i >= physical.length) break;
      const next = physical[i] as string;
      text += next.slice(skipWhitespace(next, 0));
    }
    lines.push({ text, line: start });
  }
  return lines;
}

function unescapeText(text: string, line: number): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c !== '\\') {
      out += c;
      continue;
    }
    i++;
    const e = text[i];
    if (e === undefined) break;
    if (e === 't') out += '\t';
    else if (e === 'n') out += '\n';
    else if (e === 'r') out += '\r';
    else if (e === 'f') out += '\f';
    else if (e === 'u') {
      const hex = text.slice(i + 1, i + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new PropertiesSyntaxError(line, 'malformed \\uXXXX escape');
      out += String.fromCharCode(Number.parseInt(hex, 16));
      i += 4;
    } else out += e;
  }
  return out;
}

function splitKeyValue(text: string): [string, string] {
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === '=' || c === ':' || WHITESPACE.has(c)) break;
    i++;
  }
  const key = text.slice(0, Math.min(i, text.length));
  let j = skipWhitespace(text, i);
  if (j < text.length && (text[j] === '=' || text[j] === ':')) j = skipWhitespace(text, j + 1);
  return [key, text.slice(j)];
}

/** Parses .properties text into an ordered map. Values keep trailing whitespace; config parsing trims later. */
export function parseProperties(source: string): Map<string, string> {
  const props = new Map<string, string>();
  for (const { text, line } of logicalLines(source)) {
    const [rawKey, rawValue] = splitKeyValue(text);
    props.set(unescapeText(rawKey, line), unescapeText(rawValue, line));
  }
  return props;
}

function escapeText(text: string, isKey: boolean): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\') out += '\\\\';
    else if (c === '\t') out += '\\t';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\f') out += '\\f';
    // Separators end a key; a leading space would be skipped; # and ! at the start of a line open a comment.
    else if (isKey && (c === '=' || c === ':' || c === ' ')) out += `\\${c}`;
    else if (c === ' ' && i === 0) out += '\\ ';
    else if ((c === '#' || c === '!') && i === 0 && isKey) out += `\\${c}`;
    else {
      const code = c.charCodeAt(0);
      out += code < 0x20 || code === 0x7f ? `\\u${code.toString(16).padStart(4, '0')}` : c;
    }
  }
  return out;
}

/** Writes properties text that parseProperties reads back to the same map. */
export function formatProperties(props: ReadonlyMap<string, string>): string {
  let out = '';
  for (const [key, value] of props) out += `${escapeText(key, true)}=${escapeText(value, false)}\n`;
  return out;
}
