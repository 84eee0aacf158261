// The principal of a TLS client: its certificate's subject distinguished name as Java's
// X500Principal.getName() prints it (RFC 2253: most specific RDN first, comma-separated, no spaces), mapped by
// `ssl.principal.mapping.rules` with Kafka's rule syntax:
//
//   RULE:pattern/replacement/[LU]   the pattern must match the whole DN; $1.. refer to its groups; L or U folds case
//   DEFAULT                         the DN unchanged
//
// Rules are tried in order and the first that matches names the principal; when none matches, the client is not
// authenticated (Kafka fails the connection the same way). A connection without a client certificate is
// User:ANONYMOUS.

import type { X509Certificate } from 'node:crypto';

export class PrincipalMappingError extends Error {
  override name = 'PrincipalMappingError';
}

interface Rule {
  /** null: DEFAULT. */
  readonly pattern: RegExp | null;
  readonly whole: RegExp | null;
  readonly replacement: string;
  readonly fold: 'L' | 'U' | '';
}

// Kafka's rule grammar: DEFAULT, or RULE: then pattern and replacement in which backslash escapes the next
// character, separated by slashes, then an optional case flag.
const RULE_PATTERN = String.raw`(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?).*?|(.*?)`;
const RULE_SPLITTER = new RegExp(String.raw`\s*(${RULE_PATTERN})\s*(?:,\s*|$)`, 'gy');
const RULE_PARSER = new RegExp(`^(?:${RULE_PATTERN})`);

/** A Java replacement string as a JavaScript one: `\x` is a literal x, `$n` a group. */
function javaReplacement(replacement: string): string {
  let out = '';
  for (let i = 0; i < replacement.length; i++) {
    const c = replacement[i] as string;
    if (c === '\\' && i + 1 < replacement.length) {
      const next = replacement[++i] as string;
      out += next === '$' ? '$$' : next;
    } else {
      out += c;
    }
  }
  return out;
}

function splitRules(text: string): string[] {
  const rules: string[] = [];
  const trimmed = text.trim();
  RULE_SPLITTER.lastIndex = 0;
  while (RULE_SPLITTER.lastIndex < trimmed.length) {
    const match = RULE_SPLITTER.exec(trimmed);
    if (match === null)
      throw new PrincipalMappingError(`Invalid rule: ${trimmed.slice(RULE_SPLITTER.lastIndex)}`);
    rules.push(match[1] as string);
    if (match[0] === '') break;
  }
  return rules;
}

function parseRule(text: string): Rule | null {
  const match = RULE_PARSER.exec(text);
  if (match === null || match[0].length !== text.length) {
    throw new PrincipalMappingError(`Invalid rule: \`${text}\``);
  }
  if (match[1] !== undefined) return { pattern: null, whole: null, replacement: '', fold: '' };
  if (match[2] === undefined) return null; // an empty rule is ignored, as in Kafka
  try {
    return {
      pattern: new RegExp(match[2], 'g'),
      whole: new RegExp(`^(?:${match[2]})$`),
      replacement: javaReplacement(match[3] ?? ''),
      fold: (match[4] ?? '') as Rule['fold'],
    };
  } catch (err) {
    throw new PrincipalMappingError(`Invalid rule: \`${text}\`: ${(err as Error).message}`);
  }
}

export class SslPrincipalMapper {
  private readonly rules: readonly Rule[];

  /** Throws PrincipalMappingError for rules Kafka would refuse at startup. */
  constructor(rulesText: string) {
    this.rules = splitRules(rulesText)
      .map(parseRule)
      .filter((r): r is Rule => r !== null);
  }

  /** The principal name for a distinguished name, or null when no rule applies. */
  nameOf(distinguishedName: string): string | null {
    for (const rule of this.rules) {
      if (rule.pattern === null || rule.whole === null) return distinguishedName;
      if (!rule.whole.test(distinguishedName)) continue;
      rule.pattern.lastIndex = 0;
      const name = distinguishedName.replace(rule.pattern, rule.replacement);
      if (rule.fold === 'L') return name.toLowerCase();
      if (rule.fold === 'U') return name.toUpperCase();
      return name;
    }
    return null;
  }
}

/**
 * The subject of a DER certificate in RFC 2253 order. Node lists the subject's attributes one per line in
 * certificate order (least specific first) and already escapes values as RFC 2253 asks; Java prints them in
 * reverse order, joined by commas.
 */
export function distinguishedName(certificate: X509Certificate): string {
  return certificate.subject
    .split('\n')
    .filter((line) => line !== '')
    .reverse()
    .join(',');
}
