// The worker's response.http.headers.config: headers added to every REST answer (HSTS, X-Frame-Options and other
// headers a security review asks for), in the syntax of the Jetty HeaderFilter Kafka's RestServer installs:
// comma-separated rules (a rule holding a comma in double quotes), each "[action] [header name]:[header value]"
// with the action set, add, setDate or addDate (a date N ms from the answer's time). Checked when the worker
// config loads, with the messages of Kafka's RestServerConfig.validateHttpResponseHeaderConfig.

import type { ServerResponse } from 'node:http';
import type { Validator } from '../api/config-def.js';
import { ConfigException } from '../errors.js';

const ACTIONS = ['set', 'add', 'setDate', 'addDate'] as const;
type Action = (typeof ACTIONS)[number];

export interface ResponseHeaderRule {
  readonly action: Action;
  readonly name: string;
  readonly value: string;
}

/** The rules of the setting; throws Kafka's ConfigException for a rule that does not parse. */
export function responseHeaderRules(config: string): ResponseHeaderRule[] {
  if (config.trim() === '') return [];
  return csvSplit(config).map(parseRule);
}

/** The setting's validator for the worker's ConfigDef. */
export const responseHeadersValidator: Validator = {
  ensureValid(_name, value) {
    if (typeof value === 'string') responseHeaderRules(value);
  },
  toString: () =>
    "Comma-separated header rules, where each header rule is of the form '[action] [header name]:[header value]'",
};

/** Adds the rules' headers to an answer before it is written (the handler's own headers come after). */
export function applyResponseHeaders(rules: readonly ResponseHeaderRule[], res: ServerResponse): void {
  for (const r of rules) {
    const value = r.action.endsWith('Date') ? new Date(Date.now() + Number(r.value)).toUTCString() : r.value;
    if (r.action.startsWith('set')) res.setHeader(r.name, value);
    else res.appendHeader(r.name, value);
  }
}

function parseRule(rule: string): ResponseHeaderRule {
  const tokens = rule.trim().split(/\s+/);
  const action = tokens[0] ?? '';
  const header = rule.trim().slice(action.length).trim();
  if (tokens.length < 2 || header === '') {
    throw new ConfigException(
      `Invalid format of header config '${rule}'. Expected: '[action] [header name]:[header value]'`,
    );
  }
  const known = ACTIONS.find((a) => a.toLowerCase() === action.toLowerCase());
  if (known === undefined) {
    throw new ConfigException(
      `Invalid header config action: '${action}'. Expected one of [${ACTIONS.join(', ')}]`,
    );
  }
  const pair = header.split(':');
  if (pair.length !== 2) {
    throw new ConfigException(
      `Invalid format of header name and header value pair '${header}'. Expected: '[header name]:[header value]'`,
    );
  }
  const name = pair[0]!.trim();
  if (name === '' || /\s/.test(name))
    throw new ConfigException(`Invalid header name '${name}'. The '[header name]' cannot contain whitespace`);
  const value = pair[1]!.trim();
  if (known.endsWith('Date') && !/^-?\d+$/.test(value))
    throw new ConfigException(
      `Invalid header config '${rule}'. A date header's value is a number of milliseconds`,
    );
  return { action: known, name, value };
}

/** Jetty's StringUtil.csvSplit: commas split, except inside double quotes, which are removed. */
function csvSplit(text: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (const c of text) {
    if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) {
      out.push(current.trim());
      current = '';
    } else current += c;
  }
  out.push(current.trim());
  return out.filter((s) => s !== '');
}
